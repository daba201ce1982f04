#pragma once

// sd-event's I/O source with the loop's one exception guard (Source.h), so that no code outside this layer
// writes its own around a socket's or an eventfd's callback.

#include "libsystemd/Source.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <cstdint>
#include <functional>

namespace nicer::libsystemd {

/**
 * Watches a file descriptor on an sd-event loop: the callback runs from the loop with the events that are
 * ready (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) each time the descriptor is ready for the events asked for, while
 * the source is enabled. The callback may change the events, disable the source, or destroy it. An exception
 * from the callback goes to the error handler (if any) and never into sd-event; the loop goes on.
 */
class IoSource final : public detail::Source {
public:
    using Callback = std::function<void(std::uint32_t revents)>;

    IoSource() = default;
    /// Watches @p fd for @p events, enabled. The descriptor stays the caller's: it must outlive the source,
    /// which never closes it.
    static Result<IoSource> create(sd_event* event, int fd, std::uint32_t events, Callback callback);

    /// Waits for @p events from now on (the source stays enabled or disabled as it was).
    void setEvents(std::uint32_t events);
    /// The events it waits for (0 for an empty source).
    std::uint32_t events() const;
    /// On (the callback runs whenever the descriptor is ready) or off (it never runs).
    void setEnabled(bool enabled);
    bool enabled() const;
    /// The watched descriptor, -1 for an empty source.
    int fd() const;

private:
    using Source::Source;
};

} // namespace nicer::libsystemd
