#pragma once

// Waiting in tests: poll a condition with a deadline instead of sleeping a fixed time before an assertion.

#include <chrono>
#include <thread>

namespace nicer::test {

/// Checks @p condition every @p step until it holds (true) or @p timeout has passed (false, after one last
/// check). The timeout is a bound for a broken build, not a figure the test measures: keep it generous.
template <typename Condition>
bool pollUntil(Condition&& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step = std::chrono::milliseconds(100)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(step);
    }
    return condition();
}

} // namespace nicer::test
