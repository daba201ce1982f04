#include "desktop/SleepInhibitor.h"

#include "libsystemd/Bus.h"
#include "libsystemd/Message.h"
#include "util/Log.h"

#include <cerrno>
#include <fcntl.h>

namespace nicer::desktop {

namespace {

constexpr std::chrono::seconds kRetryInterval{60};

} // namespace

SleepInhibitor::SleepInhibitor(sd_event* event, std::string systemBusAddress)
    : m_bus(event, libsystemd::BusTarget::systemOr(std::move(systemBusAddress)),
            {.connected = {},
             .lost = {},
             .onError = [this](std::string_view what) { m_note = "logind: " + std::string(what); }}) {}

SleepInhibitor::~SleepInhibitor() {
    m_call.reset();
    m_bus.close();
}

void SleepInhibitor::want(const std::string& why) {
    m_why = why;
    if (why.empty()) {
        release();
        return;
    }
    if (m_call || (m_fd.valid() && m_heldWhy == why)) {
        return; // asked for, or held with this reason
    }
    if (!m_note.empty() && Clock::now() - m_lastTry < kRetryInterval) {
        return; // refused a moment ago
    }
    ask();
}

void SleepInhibitor::release() {
    m_call.reset(); // an answer still on its way is dropped, and its inhibitor with it
    if (m_fd.valid()) {
        m_fd.reset();
        log::notice() << "nicerd: the machine may sleep again (logind's sleep inhibitor released)";
    }
    m_heldWhy.clear();
    m_note.clear();
}

void SleepInhibitor::ask() {
    m_lastTry = Clock::now();
    if (!m_bus.isOpen()) {
        if (auto connected = m_bus.connect(); !connected) {
            m_note = "cannot reach logind to keep the machine awake: " + connected.error().message;
            return;
        }
    }
    const std::string why = m_why;
    auto made = m_bus.callMethod(
        {"org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "Inhibit"},
        [&why](libsystemd::MessageWriter& out) { out.append("ssss", "sleep", "nicer", why.c_str(), "block"); },
        [this](sd_bus_message* reply) { onAnswer(reply); }, libsystemd::kCallTimeoutUsec);
    if (!made) {
        m_note = "cannot ask logind to keep the machine awake: " + made.error().message;
        return;
    }
    m_call = std::move(*made);
    m_heldWhy = why;
}

void SleepInhibitor::onAnswer(sd_bus_message* reply) {
    m_call.reset();
    if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
        m_note = "logind refused to keep the machine awake: " + libsystemd::busErrorText(-EIO, error);
        log::warning() << "nicerd: " << m_note;
        return;
    }
    int fd = -1;
    if (const int r = sd_bus_message_read(reply, "h", &fd); r < 0) {
        m_note = "logind answered Inhibit with no inhibitor: " + libsystemd::busErrorText(r, nullptr);
        log::warning() << "nicerd: " << m_note;
        return;
    }
    // The message owns fd: keep a copy. The one held before (another reason) goes after, so that the
    // machine is never without one in between.
    UniqueFd held(fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!held.valid()) {
        m_note = "cannot keep logind's sleep inhibitor: " + libsystemd::busErrorText(-errno, nullptr);
        return;
    }
    const bool first = !m_fd.valid();
    m_fd = std::move(held);
    m_note.clear();
    if (first) {
        log::notice() << "nicerd: keeping the machine awake (logind's sleep inhibitor: " << m_heldWhy << ")";
    }
}

} // namespace nicer::desktop
