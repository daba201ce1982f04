#include "desktop/SleepInhibitor.h"

#include "libsystemd/Bus.h"
#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"
#include "util/Log.h"

#include <cerrno>
#include <fcntl.h>
#include <utility>

namespace nicer::desktop {

namespace {

constexpr std::chrono::seconds kRetryInterval{60};
constexpr const char* kPortal = "org.freedesktop.portal.Desktop";
constexpr std::uint32_t kPortalSuspend = 4; // org.freedesktop.portal.Inhibit's flag: "Suspend"

std::string answerError(sd_bus_message* reply) {
    return libsystemd::busErrorText(-EIO, sd_bus_message_get_error(reply));
}

} // namespace

SleepInhibitor::SleepInhibitor(sd_event* event, libsystemd::BusTarget systemBus,
                               libsystemd::BusTarget sessionBus)
    : m_system(event, std::move(systemBus),
               {.connected = {},
                .lost = {},
                .onError = [this](std::string_view what) { refused("logind: " + std::string(what)); }})
    , m_session(event, std::move(sessionBus),
                {.connected = {},
                 .lost = [this] { m_request.clear(); }, // the portal drops a leaver's inhibitions
                 .onError = [this](std::string_view what) { refused("the portal: " + std::string(what)); }}) {
}

SleepInhibitor::~SleepInhibitor() {
    m_call.reset();
    closePortalRequest(m_request);
    m_session.close();
    m_system.close();
}

void SleepInhibitor::want(const std::string& why) {
    m_why = why;
    if (why.empty()) {
        release();
        return;
    }
    if (m_call || (held() && m_heldWhy == why)) {
        return; // asked for, or held with this reason
    }
    if (!m_note.empty() && Clock::now() - m_lastTry < kRetryInterval) {
        return; // refused a moment ago
    }
    m_lastTry = Clock::now();
    m_heldWhy = why;
    askLogind();
}

void SleepInhibitor::release() {
    m_call.reset(); // an answer still on its way is dropped, and its inhibitor with it
    if (held()) {
        log::notice() << "nicerd: the machine may sleep again (released " << m_heldBy << "'s inhibitor)";
    }
    m_fd.reset();
    closePortalRequest(std::exchange(m_request, {}));
    m_heldBy.clear();
    m_heldWhy.clear();
    m_note.clear();
}

void SleepInhibitor::askLogind() {
    if (!m_system.isOpen()) {
        if (auto connected = m_system.connect(); !connected) {
            m_logindRefusal = "cannot reach logind: " + connected.error().message;
            askPortal();
            return;
        }
    }
    const std::string why = m_heldWhy;
    auto made = m_system.callMethod(
        {"org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "Inhibit"},
        [&why](libsystemd::MessageWriter& out) {
            out.append("ssss", "sleep", "nicer", why.c_str(), "block");
        },
        [this](sd_bus_message* reply) { onLogind(reply); }, libsystemd::kCallTimeoutUsec);
    if (!made) {
        m_logindRefusal = "cannot ask logind: " + made.error().message;
        askPortal();
        return;
    }
    m_call = std::move(*made);
}

void SleepInhibitor::onLogind(sd_bus_message* reply) {
    m_call.reset();
    if (sd_bus_message_is_method_error(reply, nullptr) > 0) {
        m_logindRefusal = "logind refused (" + answerError(reply) + ")";
        askPortal();
        return;
    }
    int fd = -1;
    if (const int r = sd_bus_message_read(reply, "h", &fd); r < 0) {
        m_logindRefusal = "logind answered with no inhibitor (" + libsystemd::busErrorText(r, nullptr) + ")";
        askPortal();
        return;
    }
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 3)); // the message owns fd
    if (!copy.valid()) {
        refused("cannot keep logind's sleep inhibitor: " + libsystemd::busErrorText(-errno, nullptr));
        return;
    }
    closePortalRequest(std::exchange(m_request, {})); // one held before, for another reason
    m_fd = std::move(copy);
    granted("logind");
}

void SleepInhibitor::askPortal() {
    if (!m_session.isOpen()) {
        if (auto connected = m_session.connect(); !connected) {
            refused(m_logindRefusal + ", and the desktop's portal cannot be reached (" +
                    connected.error().message + ")");
            return;
        }
    }
    auto call = libsystemd::newMethodCall(
        m_session.bus(),
        {kPortal, "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Inhibit", "Inhibit"},
        [this](libsystemd::MessageWriter& out) {
            out.append("sua{sv}", "", kPortalSuspend, 1, "reason", "s", m_heldWhy.c_str());
        });
    if (call) {
        // The portal is started on demand on desktops that have one (xdg-desktop-portal is bus-activated).
        (void)sd_bus_message_set_auto_start(call->get(), 1);
    }
    auto made = call ? m_session.callAsync(
                           call->get(), [this](sd_bus_message* reply) { onPortal(reply); },
                           libsystemd::kCallTimeoutUsec)
                     : Result<libsystemd::BusSlot>(call.error());
    if (!made) {
        refused(m_logindRefusal + ", and the desktop's portal cannot be asked (" + made.error().message +
                ")");
        return;
    }
    m_call = std::move(*made);
}

void SleepInhibitor::onPortal(sd_bus_message* reply) {
    m_call.reset();
    if (sd_bus_message_is_method_error(reply, nullptr) > 0) {
        const sd_bus_error* error = sd_bus_message_get_error(reply);
        refused(m_logindRefusal + ", and " +
                (libsystemd::serviceAbsent(error)
                     ? std::string("no desktop portal is on the session bus")
                     : "the desktop's portal refused (" + answerError(reply) + ")"));
        return;
    }
    const char* request = nullptr;
    if (sd_bus_message_read(reply, "o", &request) < 0 || request == nullptr) {
        refused(m_logindRefusal + ", and the desktop's portal answered with no inhibition");
        return;
    }
    const std::string old = std::exchange(m_request, request);
    m_fd.reset(); // logind's, held before for another reason
    closePortalRequest(old);
    granted("the desktop's portal");
}

void SleepInhibitor::granted(const char* route) {
    const bool first = !held();
    m_heldBy = route;
    m_note.clear();
    m_logindRefusal.clear();
    if (first) {
        log::notice() << "nicerd: keeping the machine awake through " << route << " (" << m_heldWhy << ")";
    }
}

void SleepInhibitor::refused(std::string why) {
    m_call.reset();
    m_note = "the machine cannot be kept awake: " + std::move(why);
    log::warning() << "nicerd: " << m_note;
}

void SleepInhibitor::closePortalRequest(const std::string& request) {
    if (request.empty() || !m_session.isOpen()) {
        return; // none, or the portal dropped it when the connection closed
    }
    auto call = libsystemd::newMethodCall(
        m_session.bus(), {kPortal, request.c_str(), "org.freedesktop.portal.Request", "Close"});
    if (call) {
        (void)sd_bus_send(m_session.bus(), call->get(), nullptr); // no answer to wait for
    }
}

} // namespace nicer::desktop
