#include "boinc/GuiRpcClient.h"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <utility>

namespace nicer::boinc {

namespace {

std::string seconds(std::chrono::milliseconds duration) {
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%g s", static_cast<double>(duration.count()) / 1000.0);
    return text.data();
}

bool wouldBlock(int error) {
    return error == EAGAIN || error == EWOULDBLOCK;
}

} // namespace

Result<std::unique_ptr<GuiRpcClient>> GuiRpcClient::create(sd_event* event, const std::string& host,
                                                           std::uint16_t port, std::string password) {
    if (port == 0) {
        return Error{"cannot reach BOINC's GUI RPC at " + host + ": port 0 is not a port to connect to"};
    }
    std::string literal = host == "localhost" ? "127.0.0.1" : host;
    if (literal.size() > 2 && literal.front() == '[' && literal.back() == ']') {
        literal = literal.substr(1, literal.size() - 2); // "[::1]" as written with a port
    }
    sockaddr_storage address{};
    socklen_t length = 0;
    std::string endpoint;
    sockaddr_in v4{};
    sockaddr_in6 v6{};
    if (::inet_pton(AF_INET, literal.c_str(), &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        std::memcpy(&address, &v4, sizeof v4);
        length = sizeof v4;
        endpoint = literal + ":" + std::to_string(port);
    } else if (::inet_pton(AF_INET6, literal.c_str(), &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        std::memcpy(&address, &v6, sizeof v6);
        length = sizeof v6;
        endpoint = "[" + literal + "]:" + std::to_string(port);
    } else {
        return Error{"cannot reach BOINC's GUI RPC at '" + host +
                     "': give an IP address or localhost (a host name would need a lookup that blocks)"};
    }
    auto client = std::unique_ptr<GuiRpcClient>(
        new GuiRpcClient(event, std::move(endpoint), address, length, std::move(password)));
    if (auto started = client->start(); !started) {
        return started.error();
    }
    return client;
}

GuiRpcClient::GuiRpcClient(sd_event* event, std::string endpoint, const sockaddr_storage& address,
                           socklen_t addressLength, std::string password)
    : m_event(sd_event_ref(event))
    , m_endpoint(std::move(endpoint))
    , m_address(address)
    , m_addressLength(addressLength)
    , m_password(std::move(password)) {}

GuiRpcClient::~GuiRpcClient() {
    *m_alive = false;
    closeSocket();
}

Result<void> GuiRpcClient::start() {
    auto kick = libsystemd::Defer::create(m_event.get(), [this] { handleKick(); });
    auto timer = libsystemd::Timer::create(
        m_event.get(), [this] { handleTimeout(); }, CLOCK_MONOTONIC, std::chrono::microseconds(0));
    if (!kick || !timer) {
        return Error{"cannot set up the GUI RPC client for " + m_endpoint + ": " +
                     (kick ? timer.error() : kick.error()).message};
    }
    m_kick = std::move(*kick);
    m_timer = std::move(*timer);
    m_kick.setErrorHandler(errorHandler());
    m_timer.setErrorHandler(errorHandler());
    return {};
}

libsystemd::ErrorHandler GuiRpcClient::errorHandler() {
    // A callback may destroy the client, so the failure is reported only while it is still alive.
    return [this, alive = m_alive](std::string_view what) {
        if (*alive) {
            failFromException(std::string(what).c_str());
        }
    };
}

void GuiRpcClient::call(std::string body, Callback done) {
    std::string name = requestName(body);
    PendingCall pending{std::move(body), std::move(name), std::move(done)};
    // Framing adds the envelope and the \003; the client keeps room for a terminating NUL.
    if (frameRequest(pending.body).size() >= kMaxRequestBytes) {
        m_rejected.push_back(std::move(pending));
    } else {
        m_queue.push_back(std::move(pending));
    }
    m_kick.trigger();
}

void GuiRpcClient::handleKick() {
    if (!m_rejected.empty()) {
        std::deque<PendingCall> rejected = std::exchange(m_rejected, {});
        const auto alive = m_alive;
        for (PendingCall& pending : rejected) {
            pending.done(failure("cannot take " + pending.name + ": the request is " +
                                 std::to_string(frameRequest(pending.body).size()) +
                                 " bytes, and the client reads at most " +
                                 std::to_string(kMaxRequestBytes - 1)));
            if (!*alive) {
                return;
            }
        }
    }
    if (m_queue.empty()) {
        return;
    }
    if (m_state == State::Idle) {
        connect();
    } else if (m_state == State::Ready && !m_inFlight) {
        m_inFlight = true;
        armTimer(); // first: a failed send may end in a callback that destroys the client
        send(m_queue.front().body);
    }
}

void GuiRpcClient::connect() {
    m_fd.reset(::socket(m_address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!m_fd) {
        fail(failure(std::string("cannot be reached: no socket: ") + std::strerror(errno)));
        return;
    }
    // A non-blocking connect finishes (or fails) as writability, so the outcome always comes from the loop.
    if (::connect(m_fd.get(), reinterpret_cast<const sockaddr*>(&m_address), m_addressLength) < 0 &&
        errno != EINPROGRESS) {
        finishConnect(errno);
        return;
    }
    auto io = libsystemd::IoSource::create(m_event.get(), m_fd.get(), EPOLLOUT,
                                           [this](std::uint32_t revents) { handleIo(revents); });
    if (!io) {
        fail(failure("cannot be reached: " + io.error().message));
        return;
    }
    m_io = std::move(*io);
    m_io.setErrorHandler(errorHandler());
    m_ioEvents = EPOLLOUT;
    m_state = State::Connecting;
    armTimer();
}

void GuiRpcClient::finishConnect(int error) {
    if (error == ECONNREFUSED) {
        fail(failure("refused the connection: is the client running?"));
        return;
    }
    if (error != 0) {
        fail(Error{"cannot connect to BOINC's GUI RPC at " + m_endpoint + ": " + std::strerror(error)});
        return;
    }
    startAuthentication();
}

void GuiRpcClient::startAuthentication() {
    m_state = State::AwaitingNonce;
    m_replies.clear();
    armTimer();
    send("<auth1/>\n");
}

void GuiRpcClient::failFromException(const char* what) noexcept {
    try {
        fail(failure(std::string("could not be used: nicer's own error: ") + what));
    } catch (...) {
        // A callback threw while being told of the failure: nothing is left to tell.
    }
}

void GuiRpcClient::handleIo(std::uint32_t revents) {
    if (m_state == State::Connecting) {
        int error = 0;
        socklen_t length = sizeof error;
        if (::getsockopt(m_fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) < 0) {
            error = errno;
        }
        finishConnect(error);
        return;
    }
    if ((revents & EPOLLOUT) != 0) {
        const auto alive = m_alive;
        flush();
        if (!*alive || m_state == State::Idle) {
            return;
        }
    }
    if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
        readAvailable();
    }
}

void GuiRpcClient::send(std::string_view body) {
    m_out = frameRequest(body);
    m_outOffset = 0;
    flush();
}

void GuiRpcClient::flush() {
    while (m_outOffset < m_out.size()) {
        const ssize_t n =
            ::send(m_fd.get(), m_out.data() + m_outOffset, m_out.size() - m_outOffset, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && wouldBlock(errno)) {
            break;
        }
        if (n < 0) {
            fail(Error{"lost the connection to BOINC's GUI RPC at " + m_endpoint + " while sending " +
                       currentStep() + ": " + std::strerror(errno)});
            return;
        }
        m_outOffset += static_cast<std::size_t>(n);
    }
    if (m_outOffset == m_out.size()) {
        m_out.clear();
        m_outOffset = 0;
    }
    updateEvents();
}

void GuiRpcClient::updateEvents() {
    const std::uint32_t events = EPOLLIN | (m_out.empty() ? 0U : std::uint32_t{EPOLLOUT});
    if (m_io && events != m_ioEvents) {
        m_io.setEvents(events);
        m_ioEvents = events;
    }
}

void GuiRpcClient::readAvailable() {
    const auto alive = m_alive;
    std::array<char, 64 * 1024> buffer{};
    for (;;) {
        const ssize_t n = ::recv(m_fd.get(), buffer.data(), buffer.size(), 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && wouldBlock(errno)) {
            return;
        }
        if (n < 0) {
            fail(Error{"lost the connection to BOINC's GUI RPC at " + m_endpoint + " while waiting for " +
                       currentStep() + ": " + std::strerror(errno)});
            return;
        }
        if (n == 0) {
            if (m_state == State::Ready && !m_inFlight && m_replies.empty()) {
                closeQuietly(); // between calls: the client went away; the next call connects again
            } else {
                fail(failure("closed the connection before answering " + currentStep() +
                             " (did the client exit, or refuse the request?)"));
            }
            return;
        }
        if (auto added = m_replies.append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
            !added) {
            fail(failure("sent a reply to " + currentStep() + " larger than " +
                         std::to_string(m_replies.limit() / (1024 * 1024)) + " MiB; nicer gives up on it"));
            return;
        }
        while (auto reply = m_replies.next()) {
            handleReply(std::move(*reply));
            if (!*alive || m_state == State::Idle) {
                return;
            }
        }
    }
}

void GuiRpcClient::handleReply(std::string reply) {
    switch (m_state) {
    case State::AwaitingNonce: {
        auto nonce = parseNonce(reply);
        if (!nonce) {
            fail(failure("did not sign nicer in: " + nonce.error().message));
            return;
        }
        auto hash = authHash(*nonce, m_password);
        if (!hash) {
            fail(hash.error());
            return;
        }
        m_state = State::AwaitingAuthorization;
        armTimer();
        send("<auth2>\n<nonce_hash>" + *hash + "</nonce_hash>\n</auth2>\n");
        return;
    }
    case State::AwaitingAuthorization:
        if (auto authorized = parseAuthorized(reply); !authorized) {
            const bool refused = reply.find("<unauthorized/>") != std::string::npos;
            fail(failure(refused ? "refused nicer's password (unauthorized): is it the one in the client's "
                                   "gui_rpc_auth.cfg?"
                                 : "did not sign nicer in: " + authorized.error().message));
            return;
        }
        m_state = State::Ready;
        m_timer.disarm();
        m_kick.trigger();
        return;
    case State::Ready:
        if (m_inFlight) {
            PendingCall done = std::move(m_queue.front());
            m_queue.pop_front();
            m_inFlight = false;
            m_timer.disarm();
            if (!m_queue.empty()) {
                m_kick.trigger();
            }
            done.done(std::move(reply));
            return;
        }
        fail(failure("sent a reply when no request was waiting for one"));
        return;
    case State::Idle:
    case State::Connecting:
        return;
    }
}

void GuiRpcClient::handleTimeout() {
    switch (m_state) {
    case State::Connecting:
        fail(failure("did not accept the connection within " + seconds(m_timeout) + ": is the client busy?"));
        return;
    case State::AwaitingNonce:
    case State::AwaitingAuthorization:
    case State::Ready:
        fail(failure("did not answer " + currentStep() + " within " + seconds(m_timeout)));
        return;
    case State::Idle:
        return;
    }
}

std::string GuiRpcClient::currentStep() const {
    switch (m_state) {
    case State::AwaitingNonce:
        return "the sign-in (auth1)";
    case State::AwaitingAuthorization:
        return "the sign-in (auth2)";
    case State::Ready:
        if (m_inFlight && !m_queue.empty()) {
            return m_queue.front().name;
        }
        return "a request";
    case State::Idle:
    case State::Connecting:
        break;
    }
    return "the connection";
}

Error GuiRpcClient::failure(const std::string& what) const {
    return Error{"BOINC's GUI RPC at " + m_endpoint + " " + what};
}

void GuiRpcClient::closeSocket() {
    m_io = {};
    m_ioEvents = 0;
    m_fd.reset();
    m_out.clear();
    m_outOffset = 0;
    m_replies.clear();
    m_inFlight = false;
    m_state = State::Idle;
    m_timer.disarm();
}

void GuiRpcClient::closeQuietly() {
    closeSocket();
    if (!m_queue.empty()) {
        m_kick.trigger();
    }
}

void GuiRpcClient::fail(const Error& error) {
    closeSocket();
    std::deque<PendingCall> failed = std::exchange(m_queue, {});
    const auto alive = m_alive;
    for (PendingCall& pending : failed) {
        pending.done(error);
        if (!*alive) {
            return; // destroyed by that callback: the rest are dropped, as documented
        }
    }
}

} // namespace nicer::boinc
