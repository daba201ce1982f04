#pragma once

// What the loop's sources share (Timer, Defer, IoSource): the owned sd_event_source, its callback run through
// the one exception guard at the C boundary (Guard.h).

#include "libsystemd/Event.h"
#include "libsystemd/Guard.h"

#include <systemd/sd-event.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>

namespace nicer::libsystemd {

namespace detail {

/// What a source shares with its C callback. Kept alive by the callback while it runs, so the owner may
/// destroy the source from its own callback.
struct SourceState : std::enable_shared_from_this<SourceState> {
    EventSourcePtr source;
    /// Called with the I/O events that woke an IoSource, 0 for the others.
    std::function<void(std::uint32_t)> callback;
    ErrorHandler onError;
    clockid_t clock = CLOCK_MONOTONIC; // a Timer's
    std::uint64_t due = 0;             // a Timer's

    /// Runs the callback of the state @p userdata points to, through the guard (Guard.h).
    static void run(void* userdata, std::uint32_t revents) noexcept;
};

/// The common part of the loop's sources: an owned source, disabled and released on destruction.
class Source {
public:
    Source() = default;
    ~Source();
    Source(Source&& other) noexcept = default;
    Source& operator=(Source&& other) noexcept;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;

    /// It was created (a default-constructed or moved-from one is empty and does nothing).
    explicit operator bool() const { return m_state != nullptr; }
    /// Called when the callback throws; without one the exception is swallowed and the loop goes on.
    void setErrorHandler(ErrorHandler handler);

protected:
    explicit Source(std::shared_ptr<SourceState> state);
    sd_event_source* source() const;
    std::shared_ptr<SourceState> m_state;

private:
    void reset() noexcept;
};

} // namespace detail

} // namespace nicer::libsystemd
