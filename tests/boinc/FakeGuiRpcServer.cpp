#include "boinc/FakeGuiRpcServer.h"

#include "boinc/GuiRpcProtocol.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nicer::test {

namespace {

constexpr std::string_view kOpen = "<boinc_gui_rpc_request>\n";
constexpr std::string_view kClose = "</boinc_gui_rpc_request>\n";

std::string unframe(std::string request) {
    if (request.starts_with(kOpen)) {
        request.erase(0, kOpen.size());
    }
    if (request.ends_with(kClose)) {
        request.erase(request.size() - kClose.size());
    }
    return request;
}

bool sendAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string between(const std::string& text, std::string_view open, std::string_view close) {
    const auto start = text.find(open);
    if (start == std::string::npos) {
        return {};
    }
    const auto end = text.find(close, start + open.size());
    return text.substr(start + open.size(),
                       end == std::string::npos ? std::string::npos : end - start - open.size());
}

} // namespace

FakeGuiRpcServer::Answer FakeGuiRpcServer::Answer::reply(std::string_view reply) {
    Answer answer;
    answer.bytes = std::string(reply) + boinc::kEndOfMessage;
    return answer;
}

FakeGuiRpcServer::FakeGuiRpcServer(Handler handler)
    : m_handler(std::move(handler)) {
    m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(m_listener >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(m_listener, 4) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    m_port = ntohs(address.sin_port);
    REQUIRE(::pipe2(m_stop, O_CLOEXEC) == 0);
    m_thread = std::thread([this] { run(); });
}

FakeGuiRpcServer::~FakeGuiRpcServer() {
    const char stop = 'x';
    [[maybe_unused]] const auto written = ::write(m_stop[1], &stop, 1);
    m_thread.join();
    ::close(m_listener);
    ::close(m_stop[0]);
    ::close(m_stop[1]);
}

std::vector<std::string> FakeGuiRpcServer::requests() const {
    const std::lock_guard lock(m_mutex);
    return m_requests;
}

int FakeGuiRpcServer::connections() const {
    const std::lock_guard lock(m_mutex);
    return m_connections;
}

void FakeGuiRpcServer::run() {
    for (;;) {
        std::array<pollfd, 2> fds{{{m_listener, POLLIN, 0}, {m_stop[0], POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        const int fd = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        int connection = 0;
        {
            const std::lock_guard lock(m_mutex);
            connection = ++m_connections;
        }
        serve(fd, connection);
        ::close(fd);
    }
}

void FakeGuiRpcServer::serve(int fd, int connection) {
    std::string buffer;
    std::array<char, 64 * 1024> chunk{};
    for (;;) {
        std::array<pollfd, 2> fds{{{fd, POLLIN, 0}, {m_stop[0], POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
        if (n <= 0) {
            return; // the client closed (or reset) the connection
        }
        buffer.append(chunk.data(), static_cast<std::size_t>(n));
        for (auto end = buffer.find(boinc::kEndOfMessage); end != std::string::npos;
             end = buffer.find(boinc::kEndOfMessage)) {
            std::string request = unframe(buffer.substr(0, end));
            buffer.erase(0, end + 1);
            {
                const std::lock_guard lock(m_mutex);
                m_requests.push_back(request);
            }
            const Answer answer = m_handler(request, connection);
            if (!sendAll(fd, answer.bytes) || answer.close) {
                return;
            }
        }
    }
}

FakeGuiRpcServer::Handler FakeGuiRpcServer::standard(std::string password,
                                                     std::map<std::string, std::string> replies) {
    return [password = std::move(password), replies = std::move(replies)](const std::string& request,
                                                                          int) -> Answer {
        const std::string name = boinc::requestName(request);
        if (name == "auth1") {
            return Answer::reply("<boinc_gui_rpc_reply>\n<nonce>" + std::string(kNonce) +
                                 "</nonce>\n</boinc_gui_rpc_reply>\n");
        }
        if (name == "auth2") {
            const auto expected = boinc::authHash(kNonce, password);
            if (expected.ok() && between(request, "<nonce_hash>", "</nonce_hash>") == *expected) {
                return Answer::reply("<boinc_gui_rpc_reply>\n<authorized/>\n</boinc_gui_rpc_reply>\n");
            }
            Answer refused =
                Answer::reply("<boinc_gui_rpc_reply>\n<unauthorized/>\n</boinc_gui_rpc_reply>\n");
            refused.close = true; // as the real client does after a wrong password
            return refused;
        }
        if (const auto found = replies.find(name); found != replies.end()) {
            return Answer::reply(found->second);
        }
        return Answer::reply("<boinc_gui_rpc_reply>\n<error>unrecognized op: " + name +
                             "</error>\n</boinc_gui_rpc_reply>\n");
    };
}

} // namespace nicer::test
