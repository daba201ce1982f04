#pragma once

// The one exception guard at libsystemd's C boundary: sd-event's sources (Source.h) and sd-bus's matches and
// calls (Connection.h) run their callbacks through it, so that no code outside this layer writes its own.

#include <exception>
#include <functional>
#include <string_view>
#include <utility>

namespace nicer::libsystemd {

/// Called with the exception's what() when a callback throws (or "unknown exception").
using ErrorHandler = std::function<void(std::string_view what)>;

namespace detail {

/// Tells @p onError (if any) what failed; an exception from the handler itself is swallowed.
void reportError(const ErrorHandler& onError, std::string_view what) noexcept;

/// Runs @p body; nothing it throws gets into sd-event or sd-bus: the exception goes to @p onError (if any),
/// and the loop keeps running.
template <typename Body>
void guarded(const ErrorHandler& onError, Body&& body) noexcept {
    try {
        std::forward<Body>(body)();
    } catch (const std::exception& e) {
        reportError(onError, e.what());
    } catch (...) {
        reportError(onError, "unknown exception");
    }
}

} // namespace detail

} // namespace nicer::libsystemd
