#pragma once

// sd-event loops in tests: a new loop, and running one until a condition holds.

#include "libsystemd/Event.h"

#include <catch2/catch.hpp>

#include <chrono>

namespace nicer::test {

inline libsystemd::EventPtr newLoop() {
    sd_event* event = nullptr;
    REQUIRE(sd_event_new(&event) >= 0);
    return libsystemd::EventPtr(event);
}

/// Runs @p n iterations of @p event that do not wait.
inline void spin(sd_event* event, int n = 3) {
    for (int i = 0; i < n; ++i) {
        sd_event_run(event, 0);
    }
}

/// Runs @p event until @p condition holds or @p timeout passes; the condition's final value. The timeout
/// bounds a hang; it is no claim on speed.
template <typename Condition>
bool runLoopUntil(sd_event* event, Condition&& condition,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition() && std::chrono::steady_clock::now() < deadline) {
        if (sd_event_run(event, 5'000) < 0) {
            break;
        }
    }
    return condition();
}

} // namespace nicer::test
