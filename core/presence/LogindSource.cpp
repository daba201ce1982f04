#include "presence/LogindSource.h"

#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"
#include "util/Log.h"

#include <cerrno>
#include <cstring>
#include <string_view>

namespace nicer::presence {

namespace {

constexpr const char* kLogind = "org.freedesktop.login1";
constexpr const char* kSessionInterface = "org.freedesktop.login1.Session";
constexpr const char* kProperties = "org.freedesktop.DBus.Properties";
constexpr std::chrono::seconds kRetryInterval{10};

} // namespace

LogindSource::LogindSource(sd_event* event, Options options, std::function<void()> changed)
    : m_options(std::move(options))
    , m_changed(std::move(changed))
    , m_bus(event, libsystemd::BusTarget::systemOr(m_options.systemBusAddress),
            {.connected = [this](sd_bus*) { return watch(); },
             .lost = [this] { fail("the system bus closed: logind is not watched until it is back"); },
             .onError = [this](std::string_view what) { fail("logind: " + std::string(what)); }}) {}

LogindSource::~LogindSource() {
    // A hint of idle that nicerd set goes with it, on a connection of its own: nicerd's loop has ended, and
    // sd-bus closed this source's connection with it.
    if (m_told.value_or(false)) {
        auto sent = libsystemd::sendWithoutReply(
            m_bus.target(), {kLogind, m_toldPath.c_str(), kSessionInterface, "SetIdleHint"},
            [](libsystemd::MessageWriter& out) { out.append("b", 0); });
        if (!sent) {
            log::warning() << "nicerd: logind's idle hint stays idle: " << sent.error().message;
        }
    }
    m_tell.reset();
    m_call.reset();
    m_sessionsMatch.reset();
    m_changedMatch.reset();
    m_ownerMatch.reset();
    m_bus.close();
}

Result<std::unique_ptr<LogindSource>> LogindSource::create(sd_event* event, Options options,
                                                           std::function<void()> changed) {
    if (event == nullptr) {
        return Error{"logind's presence needs nicerd's event loop"};
    }
    auto source =
        std::unique_ptr<LogindSource>(new LogindSource(event, std::move(options), std::move(changed)));
    source->connect();
    return source;
}

void LogindSource::connect() {
    m_lastTry = Clock::now();
    if (auto connected = m_bus.connect(); !connected) {
        fail("cannot reach logind: " + connected.error().message);
    }
}

Result<void> LogindSource::watch() {
    // logind restarted, or left: ask again.
    auto owner = m_bus.addMatch(libsystemd::nameOwnerRule(kLogind), [this](sd_bus_message*) { askUser(); });
    if (!owner) {
        return owner.error().within("cannot watch logind: ");
    }
    m_ownerMatch = std::move(*owner);
    // Every session's changes: a desktop has a few sessions, and the display session's path is known only
    // after the answers below.
    auto changed =
        m_bus.addMatch(std::string("type='signal',sender='") + kLogind +
                           "',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                           "arg0='" +
                           kSessionInterface + "'",
                       [this](sd_bus_message* m) { onSessionChanged(m); });
    if (!changed) {
        return changed.error().within("cannot watch logind's sessions: ");
    }
    m_changedMatch = std::move(*changed);
    // A session that starts or ends may change which is the user's display session (logind prefers a
    // graphical one): ask again.
    auto sessions =
        m_bus.addMatch(std::string("type='signal',sender='") + kLogind +
                           "',path='/org/freedesktop/login1',interface='org.freedesktop.login1.Manager'",
                       [this](sd_bus_message* m) {
                           if (sd_bus_message_is_signal(m, nullptr, "SessionNew") > 0 ||
                               sd_bus_message_is_signal(m, nullptr, "SessionRemoved") > 0) {
                               askUser();
                           }
                       });
    if (!sessions) {
        return sessions.error().within("cannot watch logind's sessions: ");
    }
    m_sessionsMatch = std::move(*sessions);
    askUser();
    return {};
}

Result<void> LogindSource::callAsync(const libsystemd::MethodAddress& to,
                                     const std::function<void(libsystemd::MessageWriter&)>& arguments,
                                     std::function<void(sd_bus_message*)> answered) {
    auto made = m_bus.callMethod(to, arguments, std::move(answered), libsystemd::kCallTimeoutUsec);
    if (!made) {
        return made.error();
    }
    m_call = std::move(*made); // one call at a time: each answer asks the next
    return {};
}

void LogindSource::tellIdle(std::optional<bool> idle) {
    if (!idle && !m_told.value_or(false)) {
        m_told.reset(); // nothing told, or only "not idle": nothing to take back
        return;
    }
    const bool value = idle.value_or(false);
    if (m_sessionPath.empty() || (m_told == value && m_toldPath == m_sessionPath)) {
        return;
    }
    auto made = m_bus.callMethod(
        {kLogind, m_sessionPath.c_str(), kSessionInterface, "SetIdleHint"},
        [value](libsystemd::MessageWriter& out) { out.append("b", value ? 1 : 0); },
        [this, value](sd_bus_message* reply) {
            if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
                log::warning() << "nicerd: logind refused the idle hint of session " << m_sessionId << ": "
                               << libsystemd::busErrorText(-EIO, error);
                return;
            }
            log::notice() << "nicerd: told logind that you are " << (value ? "away" : "here") << " (session "
                          << m_sessionId << "'s idle hint)";
        },
        libsystemd::kCallTimeoutUsec);
    if (!made) {
        log::warning() << "nicerd: cannot tell logind the idle hint: " << made.error().message;
        return;
    }
    m_tell = std::move(*made);
    m_told = idle ? std::optional(value) : std::nullopt;
    m_toldPath = m_sessionPath;
}

void LogindSource::askUser() {
    const auto uid = static_cast<std::uint32_t>(m_options.uid);
    auto asked = callAsync(
        {kLogind, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetUser"},
        [uid](libsystemd::MessageWriter& out) { out.append("u", uid); },
        [this](sd_bus_message* reply) {
            if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
                fail(libsystemd::serviceAbsent(error) ? "logind is not on the system bus"
                                                      : "logind knows no session of yours (" +
                                                            libsystemd::busErrorText(-EIO, error) + ")");
                return;
            }
            const char* path = nullptr;
            if (sd_bus_message_read(reply, "o", &path) < 0) {
                fail("logind answered GetUser with no user");
                return;
            }
            askDisplay(path);
        });
    if (!asked) {
        fail("cannot ask logind: " + asked.error().message);
    }
}

void LogindSource::askDisplay(const std::string& userPath) {
    auto asked = callAsync(
        {kLogind, userPath.c_str(), kProperties, "Get"},
        [](libsystemd::MessageWriter& out) { out.append("ss", "org.freedesktop.login1.User", "Display"); },
        [this](sd_bus_message* reply) {
            const char* id = nullptr;
            const char* path = nullptr;
            if (sd_bus_message_get_error(reply) != nullptr ||
                sd_bus_message_read(reply, "v", "(so)", &id, &path) < 0) {
                fail("logind did not say which session is your display's");
                return;
            }
            if (id == nullptr || *id == '\0' || std::strcmp(path, "/") == 0) {
                m_sessionPath.clear();
                fail("logind knows no graphical session of yours");
                return;
            }
            m_sessionPath = path;
            m_sessionId = id;
            askSession();
        });
    if (!asked) {
        fail("cannot ask logind: " + asked.error().message);
    }
}

void LogindSource::askSession() {
    auto asked = callAsync(
        {kLogind, m_sessionPath.c_str(), kProperties, "GetAll"},
        [](libsystemd::MessageWriter& out) { out.append("s", kSessionInterface); },
        [this](sd_bus_message* reply) {
            if (sd_bus_message_get_error(reply) != nullptr) {
                fail("logind did not tell session " + m_sessionId + "'s hints");
                return;
            }
            m_answers = true;
            m_note.clear();
            readHints(reply);
        });
    if (!asked) {
        fail("cannot ask logind: " + asked.error().message);
    }
}

void LogindSource::onSessionChanged(sd_bus_message* signal) {
    const char* path = sd_bus_message_get_path(signal);
    if (!m_answers || path == nullptr || m_sessionPath != path) {
        return;
    }
    libsystemd::MessageReader in(signal);
    in.skip("s");
    readHints(signal);
    bool invalidated = false;
    in.enter('a', "s");
    const char* name = nullptr;
    while (in.read("s", &name)) {
        invalidated =
            invalidated || std::strcmp(name, "IdleHint") == 0 || std::strcmp(name, "LockedHint") == 0;
    }
    in.exit();
    if (invalidated) {
        askSession();
    }
}

void LogindSource::readHints(sd_bus_message* message) {
    libsystemd::MessageReader in(message);
    in.enter('a', "{sv}");
    while (in.enter('e', "sv")) {
        const char* name = nullptr;
        in.read("s", &name);
        int value = 0;
        if (std::strcmp(name, "IdleHint") == 0 && in.read("v", "b", &value)) {
            m_idle = value != 0;
        } else if (std::strcmp(name, "LockedHint") == 0 && in.read("v", "b", &value)) {
            m_locked = value != 0;
        } else {
            in.skip("v");
        }
        in.exit();
    }
    in.exit();
    publish();
}

void LogindSource::fail(std::string why) {
    m_answers = false;
    m_idle = false;
    m_locked = false;
    m_note = std::move(why);
    publish();
}

void LogindSource::poll() {
    if (Clock::now() - m_lastTry < kRetryInterval) {
        return;
    }
    if (!m_bus.isOpen()) {
        connect();
    } else if (!m_answers) {
        m_lastTry = Clock::now();
        askUser(); // a graphical session that started after nicerd (a call still under way is dropped)
    }
}

SourceReading LogindSource::reading() const {
    SourceReading r = notAnswering(
        m_sessionId.empty() ? std::string("logind") : "logind (session " + m_sessionId + ")", m_note);
    r.answers = m_answers;
    r.idle = m_idle;
    r.desktopDelay = true;
    r.locked = m_locked;
    return r;
}

void LogindSource::publish() {
    SourceReading now = reading();
    if (now == m_published) {
        return;
    }
    m_published = std::move(now);
    m_changed();
}

} // namespace nicer::presence
