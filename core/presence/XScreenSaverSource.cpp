#include "presence/XScreenSaverSource.h"

#include "libsystemd/IoSource.h"

#include <X11/Xauth.h>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <sys/epoll.h>
#include <unistd.h>
#include <vector>
#include <xcb/screensaver.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

namespace nicer::presence {

namespace {

constexpr std::chrono::milliseconds kAwayInterval{500};
constexpr std::chrono::milliseconds kLongestWait{5000};
constexpr std::chrono::seconds kReconnectInterval{10};

/// xcb_connection_has_error()'s code in words.
std::string connectionError(int code) {
    switch (code) {
    case XCB_CONN_CLOSED_EXT_NOTSUPPORTED:
        return "an extension it needs is missing";
    case XCB_CONN_CLOSED_MEM_INSUFFICIENT:
        return "out of memory";
    case XCB_CONN_CLOSED_PARSE_ERR:
        return "the display's name cannot be read";
    case XCB_CONN_CLOSED_INVALID_SCREEN:
        return "the display has no such screen";
    default:
        return "the connection failed or was refused (is the X server running, and may you use it?)";
    }
}

/// An X authority entry's cookie, owned.
struct Cookie {
    std::string name;
    std::vector<char> data;
};

/// The MIT-MAGIC-COOKIE-1 for the local display @p display (":0", ":1.0") in the authority file @p path, as
/// libxcb would choose it from XAUTHORITY: an entry of this host (or a wildcard) for the display's number.
std::optional<Cookie> cookieFor(const std::string& path, const std::string& display) {
    const auto colon = display.rfind(':');
    if (colon == std::string::npos) {
        return std::nullopt;
    }
    const std::string number = display.substr(colon + 1, display.find('.', colon) - colon - 1);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::FILE* file = std::fopen(path.c_str(), "rbe");
    if (file == nullptr) {
        return std::nullopt;
    }
    std::optional<Cookie> found;
    while (Xauth* entry = XauReadAuth(file)) {
        const std::string_view entryNumber(entry->number, entry->number_length);
        const std::string_view address(entry->address, entry->address_length);
        const std::string_view name(entry->name, entry->name_length);
        const bool thisHost = entry->family == FamilyWild ||
                              ((entry->family == FamilyLocal) && address == std::string_view(host));
        if (!found && thisHost && entryNumber == number && name == "MIT-MAGIC-COOKIE-1") {
            found =
                Cookie{std::string(name), std::vector<char>(entry->data, entry->data + entry->data_length)};
        }
        XauDisposeAuth(entry);
    }
    std::fclose(file);
    return found;
}

} // namespace

struct XScreenSaverSource::Link {
    struct Disconnect {
        void operator()(xcb_connection_t* c) const { xcb_disconnect(c); }
    };
    std::unique_ptr<xcb_connection_t, Disconnect> connection;
    xcb_window_t root = 0;
    libsystemd::IoSource readable;
    bool asking = false;
    unsigned int sequence = 0;
};

Result<std::unique_ptr<XScreenSaverSource>> XScreenSaverSource::create(sd_event* event, std::string display,
                                                                       std::string xauthority,
                                                                       std::chrono::milliseconds delay,
                                                                       std::function<void()> changed) {
    auto source = std::unique_ptr<XScreenSaverSource>(
        new XScreenSaverSource(event, std::move(display), std::move(xauthority), delay, std::move(changed)));
    auto* self = source.get();
    auto timer = libsystemd::Timer::create(event, [self] { self->ask(); });
    if (!timer) {
        return timer.error().within("cannot ask the X server for the idle time: ");
    }
    source->m_next = std::move(*timer);
    source->connect();
    return source;
}

XScreenSaverSource::XScreenSaverSource(sd_event* event, std::string display, std::string xauthority,
                                       std::chrono::milliseconds delay, std::function<void()> changed)
    : m_event(event)
    , m_display(std::move(display))
    , m_xauthority(std::move(xauthority))
    , m_delay(delay)
    , m_changed(std::move(changed)) {}

XScreenSaverSource::~XScreenSaverSource() = default;

void XScreenSaverSource::connect() {
    m_lastTry = Clock::now();
    auto link = std::make_unique<Link>();
    int screen = 0;
    std::optional<Cookie> cookie;
    if (!m_xauthority.empty()) {
        cookie = cookieFor(m_xauthority, m_display);
    }
    if (cookie) {
        xcb_auth_info_t auth{static_cast<int>(cookie->name.size()), cookie->name.data(),
                             static_cast<int>(cookie->data.size()), cookie->data.data()};
        link->connection.reset(xcb_connect_to_display_with_auth_info(m_display.c_str(), &auth, &screen));
    } else {
        link->connection.reset(xcb_connect(m_display.c_str(), &screen));
    }
    if (int error = xcb_connection_has_error(link->connection.get()); error != 0) {
        lose("no X server answers at " + m_display + ": " + connectionError(error));
        return;
    }
    const xcb_query_extension_reply_t* extension =
        xcb_get_extension_data(link->connection.get(), &xcb_screensaver_id);
    if (extension == nullptr || extension->present == 0) {
        lose("the X server at " + m_display + " has no MIT-SCREEN-SAVER extension to tell the idle time");
        return;
    }
    auto roots = xcb_setup_roots_iterator(xcb_get_setup(link->connection.get()));
    for (int i = 0; i < screen && roots.rem > 0; ++i) {
        xcb_screen_next(&roots);
    }
    if (roots.rem == 0) {
        lose("the X server at " + m_display + " has no screen " + std::to_string(screen));
        return;
    }
    link->root = roots.data->root;
    auto readable = libsystemd::IoSource::create(m_event, xcb_get_file_descriptor(link->connection.get()),
                                                 EPOLLIN, [this](std::uint32_t) { onReadable(); });
    if (!readable) {
        lose("cannot watch the X server's connection: " + readable.error().message);
        return;
    }
    link->readable = std::move(*readable);
    m_link = std::move(link);
    m_note.clear();
    ask();
}

void XScreenSaverSource::ask() {
    if (!m_link || m_link->asking) {
        return;
    }
    auto cookie = xcb_screensaver_query_info(m_link->connection.get(), m_link->root);
    m_link->sequence = cookie.sequence;
    m_link->asking = true;
    if (xcb_flush(m_link->connection.get()) <= 0) {
        lose("the X server at " + m_display + " closed the connection");
    }
}

void XScreenSaverSource::onReadable() {
    xcb_connection_t* c = m_link->connection.get();
    if (m_link->asking) {
        void* reply = nullptr;
        xcb_generic_error_t* error = nullptr;
        if (xcb_poll_for_reply(c, m_link->sequence, &reply, &error) != 0) {
            m_link->asking = false;
            if (reply != nullptr) {
                auto* info = static_cast<xcb_screensaver_query_info_reply_t*>(reply);
                m_sinceInput = std::chrono::milliseconds(info->ms_since_user_input);
                m_answeredAt = Clock::now();
                m_answered = true;
                std::free(reply);
            } else {
                m_answered = false;
                m_note = "the X server at " + m_display + " refused to tell the idle time";
            }
            std::free(error);
            scheduleNext();
        }
    }
    // Events are never asked for; any the server sends anyway are dropped.
    while (xcb_generic_event_t* event = xcb_poll_for_event(c)) {
        std::free(event);
    }
    if (int error = xcb_connection_has_error(c); error != 0) {
        lose("the X server at " + m_display + " closed the connection");
        return;
    }
    publish();
}

void XScreenSaverSource::lose(std::string why) {
    m_link.reset();
    m_next.disarm();
    m_answered = false;
    m_note = std::move(why);
    publish();
}

bool XScreenSaverSource::idle() const {
    return m_answered && m_sinceInput + (Clock::now() - m_answeredAt) >= m_delay;
}

void XScreenSaverSource::scheduleNext() {
    if (idle()) {
        m_next.armIn(kAwayInterval);
        return;
    }
    const auto left = m_delay - m_sinceInput;
    m_next.armIn(
        std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(left), kAwayInterval, kLongestWait));
}

SourceReading XScreenSaverSource::reading() const {
    SourceReading r = notAnswering("XScreenSaver on " + m_display, m_note);
    r.answers = m_answered;
    if (m_answered) {
        r.sinceInput =
            m_sinceInput + std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - m_answeredAt);
        r.idle = *r.sinceInput >= m_delay;
    }
    return r;
}

void XScreenSaverSource::setDelay(std::chrono::milliseconds delay) {
    if (delay == m_delay) {
        return;
    }
    m_delay = delay;
    if (m_link && !m_link->asking) {
        scheduleNext();
    }
    publish();
}

void XScreenSaverSource::poll() {
    if (!m_link && Clock::now() - m_lastTry >= kReconnectInterval) {
        connect();
    }
}

void XScreenSaverSource::publish() {
    SourceReading now = reading();
    now.sinceInput.reset(); // the count goes on each millisecond; only what it means is told
    if (now == m_published) {
        return;
    }
    m_published = std::move(now);
    m_changed();
}

} // namespace nicer::presence
