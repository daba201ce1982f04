#include "presence/FakeCompositor.h"

#include "ext-idle-notify-v1-server-protocol.h" // generated (core/presence/WaylandProtocols.cmake)

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <wayland-server.h>

namespace nicer::test {

namespace {

void destroyResource(wl_client* /*client*/, wl_resource* resource) {
    wl_resource_destroy(resource);
}

const struct ext_idle_notification_v1_interface kNotificationImplementation = {&destroyResource};

/// A seat without a pointer, a keyboard or touch: asking for one is the protocol's missing_capability.
void getDevice(wl_client* /*client*/, wl_resource* seat, std::uint32_t /*id*/) {
    wl_resource_post_error(seat, WL_SEAT_ERROR_MISSING_CAPABILITY, "the test's seat has no input devices");
}

const struct wl_seat_interface kSeatImplementation = {&getDevice, &getDevice, &getDevice, &destroyResource};

void bindSeat(wl_client* client, void* /*data*/, std::uint32_t version, std::uint32_t id) {
    wl_resource* resource = wl_resource_create(client, &wl_seat_interface, static_cast<int>(version), id);
    if (resource == nullptr) {
        wl_client_post_no_memory(client);
        return;
    }
    wl_resource_set_implementation(resource, &kSeatImplementation, nullptr, nullptr);
    wl_seat_send_capabilities(resource, 0);
}

/// A listening socket at @p path, for wl_display_add_socket_fd (libwayland-server 1.21 makes its own sockets
/// only in XDG_RUNTIME_DIR).
int listenAt(const std::filesystem::path& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string name = path.string();
    REQUIRE(name.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, name.c_str(), name.size() + 1);
    ::unlink(name.c_str()); // a socket an earlier compositor left
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    return fd;
}

} // namespace

struct FakeCompositor::State {
    /// One ext_idle_notification_v1, with its timer.
    struct Notification {
        State* state = nullptr;
        wl_resource* resource = nullptr;
        wl_event_source* timer = nullptr;
        std::uint32_t timeout = 0;
        bool idle = false;

        /// From now, `idled` after the timeout without input. A zero timeout is at once (the timer takes 0
        /// as "off").
        void restart() const {
            wl_event_source_timer_update(timer, static_cast<int>(std::max<std::uint32_t>(timeout, 1)));
        }
    };

    wl_display* display = nullptr;
    wl_event_loop* loop = nullptr;
    int wake = -1; ///< an eventfd: calls of the test wait in `calls`
    wl_event_source* wakeSource = nullptr;
    std::vector<Notification*> notifications; ///< the compositor's thread's only

    mutable std::mutex mutex;
    std::vector<std::function<void()>> calls; ///< under mutex
    std::vector<std::uint32_t> timeouts;      ///< under mutex

    /// Runs @p call in the compositor's thread, soon.
    void post(std::function<void()> call) {
        {
            const std::lock_guard lock(mutex);
            calls.push_back(std::move(call));
        }
        const std::uint64_t one = 1;
        const ssize_t written = ::write(wake, &one, sizeof one); // an eventfd's counter takes it
        (void)written;
    }

    /// The test's calls, in the compositor's thread.
    static int onWake(int fd, std::uint32_t /*mask*/, void* data) {
        auto* state = static_cast<State*>(data);
        std::uint64_t count = 0;
        const ssize_t got = ::read(fd, &count, sizeof count);
        (void)got;
        std::vector<std::function<void()>> due;
        {
            const std::lock_guard lock(state->mutex);
            due.swap(state->calls);
        }
        for (auto& call : due) {
            call();
        }
        return 0;
    }

    static void bindNotifier(wl_client* client, void* data, std::uint32_t version, std::uint32_t id) {
        static const struct ext_idle_notifier_v1_interface implementation = {&destroyResource,
                                                                             &getIdleNotification};
        wl_resource* resource =
            wl_resource_create(client, &ext_idle_notifier_v1_interface, static_cast<int>(version), id);
        if (resource == nullptr) {
            wl_client_post_no_memory(client);
            return;
        }
        wl_resource_set_implementation(resource, &implementation, data, nullptr);
    }

    static void getIdleNotification(wl_client* client, wl_resource* notifier, std::uint32_t id,
                                    std::uint32_t timeout, wl_resource* /*seat*/) {
        auto* state = static_cast<State*>(wl_resource_get_user_data(notifier));
        wl_resource* resource = wl_resource_create(client, &ext_idle_notification_v1_interface,
                                                   wl_resource_get_version(notifier), id);
        if (resource == nullptr) {
            wl_client_post_no_memory(client);
            return;
        }
        auto* notification = new Notification{state, resource, nullptr, timeout, false};
        notification->timer = wl_event_loop_add_timer(state->loop, &onTimer, notification);
        wl_resource_set_implementation(resource, &kNotificationImplementation, notification, &onGone);
        state->notifications.push_back(notification);
        notification->restart();
        const std::lock_guard lock(state->mutex);
        state->timeouts.push_back(timeout);
    }

    static int onTimer(void* data) {
        auto* notification = static_cast<Notification*>(data);
        if (!notification->idle) {
            notification->idle = true;
            ext_idle_notification_v1_send_idled(notification->resource);
        }
        return 0;
    }

    /// A notification destroyed by its client, or with its client.
    static void onGone(wl_resource* resource) {
        auto* notification = static_cast<Notification*>(wl_resource_get_user_data(resource));
        auto& list = notification->state->notifications;
        list.erase(std::remove(list.begin(), list.end(), notification), list.end());
        wl_event_source_remove(notification->timer);
        delete notification;
    }
};

FakeCompositor::FakeCompositor(const std::filesystem::path& socket, CompositorGlobals globals)
    : m_state(std::make_unique<State>()) {
    State& state = *m_state;
    state.display = wl_display_create();
    REQUIRE(state.display != nullptr);
    state.loop = wl_display_get_event_loop(state.display);
    const int fd = listenAt(socket);
    if (wl_display_add_socket_fd(state.display, fd) != 0) {
        ::close(fd);
        FAIL("wl_display_add_socket_fd refused the socket at " << socket);
    }
    if (globals.seat) {
        REQUIRE(wl_global_create(state.display, &wl_seat_interface, 1, &state, &bindSeat) != nullptr);
    }
    if (globals.idleNotifier) {
        REQUIRE(wl_global_create(state.display, &ext_idle_notifier_v1_interface, 1, &state,
                                 &State::bindNotifier) != nullptr);
    }
    state.wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    REQUIRE(state.wake >= 0);
    state.wakeSource =
        wl_event_loop_add_fd(state.loop, state.wake, WL_EVENT_READABLE, &State::onWake, &state);
    REQUIRE(state.wakeSource != nullptr);
    m_thread = std::thread([&state] {
        wl_display_run(state.display);
        // Everything ends in the compositor's thread: the clients (and their notifications' timers), the
        // wake-up, the globals and the sockets with the display.
        wl_display_destroy_clients(state.display);
        wl_event_source_remove(state.wakeSource);
        wl_display_destroy(state.display);
    });
}

FakeCompositor::~FakeCompositor() {
    stop();
    if (m_state->wake >= 0) {
        ::close(m_state->wake);
    }
}

void FakeCompositor::input() {
    State* state = m_state.get();
    state->post([state] {
        for (State::Notification* notification : state->notifications) {
            if (notification->idle) {
                notification->idle = false;
                ext_idle_notification_v1_send_resumed(notification->resource);
            }
            notification->restart();
        }
    });
}

void FakeCompositor::stop() {
    if (!m_thread.joinable()) {
        return;
    }
    State* state = m_state.get();
    state->post([state] { wl_display_terminate(state->display); });
    m_thread.join();
}

std::vector<std::uint32_t> FakeCompositor::timeouts() const {
    const std::lock_guard lock(m_state->mutex);
    return m_state->timeouts;
}

} // namespace nicer::test
