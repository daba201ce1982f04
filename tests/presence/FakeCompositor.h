#pragma once

// A Wayland compositor double for presence/WaylandIdleSource: libwayland-server in a thread of the test, on a
// socket of its own, with a seat and ext-idle-notify-v1 whose notifications keep the protocol's rules.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

namespace nicer::test {

/// Which globals the compositor announces.
struct CompositorGlobals {
    bool seat = true;
    /// ext_idle_notifier_v1: without it, a compositor such as GNOME's Mutter or sway 1.7.
    bool idleNotifier = true;
};

/**
 * A compositor that listens at a socket path and runs its wl_event_loop in its own thread. Its globals:
 * wl_seat (version 1, no capabilities) and ext_idle_notifier_v1 (version 1). Each ext_idle_notification_v1
 * has a timer of its timeout from its creation: when it fires, `idled`; input() restarts every timer and
 * sends `resumed` to the idle ones, as a real compositor does on input. libwayland-server is not thread-safe:
 * the test's calls reach the compositor's thread through an eventfd on its loop.
 */
class FakeCompositor {
public:
    /// Listening at @p socket (an absolute path; a socket left there by an earlier compositor is replaced).
    explicit FakeCompositor(const std::filesystem::path& socket, CompositorGlobals globals = {});
    /// stop().
    ~FakeCompositor();
    FakeCompositor(const FakeCompositor&) = delete;
    FakeCompositor& operator=(const FakeCompositor&) = delete;

    /// The user's input: every notification's timer starts again, and the idle ones are told `resumed`.
    void input();
    /// Ends the compositor: every client's connection closes, and nothing listens at the socket any more.
    void stop();
    /// The timeouts (ms) of the notifications the clients asked for, in the order they asked.
    std::vector<std::uint32_t> timeouts() const;

private:
    struct State; ///< what the compositor's thread owns, and what the test's calls hand it
    std::unique_ptr<State> m_state;
    std::thread m_thread;
};

} // namespace nicer::test
