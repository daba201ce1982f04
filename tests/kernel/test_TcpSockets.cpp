// The kernel's TCP socket counters through sock_diag, on real loopback connections of this process.
#include "Poll.h"
#include "kernel/TcpSockets.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

using namespace nicer::kernel;
using namespace std::chrono_literals;

namespace {

/// A connected pair on loopback: the listener, this process's client end and its server end.
struct LoopbackPair {
    int listener = -1;
    int client = -1;
    int server = -1;

    LoopbackPair() {
        listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(listener >= 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        socklen_t length = sizeof address;
        REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
        REQUIRE(::listen(listener, 1) == 0);
        client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        server = ::accept(listener, nullptr, nullptr);
        REQUIRE(server >= 0);
    }
    ~LoopbackPair() {
        for (const int fd : {client, server, listener}) {
            ::close(fd);
        }
    }
    LoopbackPair(const LoopbackPair&) = delete;
    LoopbackPair& operator=(const LoopbackPair&) = delete;
};

/// The socket of this process with inode @p inode, as sock_diag reports it now.
TcpSocketInfo find(std::uint64_t inode) {
    const auto mine = tcpSocketsOf({::getpid()});
    REQUIRE(mine.ok());
    const auto found =
        std::find_if(mine->begin(), mine->end(), [&](const auto& s) { return s.inode == inode; });
    REQUIRE(found != mine->end());
    return *found;
}

/// The inode of descriptor @p fd of this process.
std::uint64_t inodeOf(int fd) {
    const auto target = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd)).string();
    REQUIRE(target.starts_with("socket:["));
    return std::stoull(target.substr(8));
}

} // namespace

TEST_CASE("sock_diag lists this process's sockets with their inodes, listeners left out", "[TcpSockets]") {
    const LoopbackPair pair;
    const auto inodes = socketInodesOf(::getpid());
    for (const int fd : {pair.listener, pair.client, pair.server}) {
        CHECK(std::find(inodes.begin(), inodes.end(), inodeOf(fd)) != inodes.end());
    }
    const auto mine = tcpSocketsOf({::getpid()});
    REQUIRE(mine.ok());
    const auto has = [&](int fd) {
        return std::any_of(mine->begin(), mine->end(), [&](const auto& s) { return s.inode == inodeOf(fd); });
    };
    CHECK(has(pair.client));
    CHECK(has(pair.server));
    CHECK_FALSE(has(pair.listener));
    // A process that is gone, or holds no sockets, has none.
    CHECK(tcpSocketsOf({999999999}).value().empty());
}

TEST_CASE("bytes that wait unread count as received, and bytes sent count once acknowledged",
          "[TcpSockets]") {
    const LoopbackPair pair;
    const auto clientInode = inodeOf(pair.client);
    const auto serverInode = inodeOf(pair.server);
    const auto before = find(clientInode);
    const std::string data(30000, 'x');
    REQUIRE(::write(pair.server, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
    TcpSocketInfo after;
    // Loopback delivers at once; polling only guards a slow kernel.
    nicer::test::pollUntil(
        [&] {
            after = find(clientInode);
            return after.bytesReceived >= before.bytesReceived + data.size();
        },
        1s, 10ms);
    // Nothing read yet: the kernel counts the bytes received and holds them unread.
    CHECK(after.bytesReceived == before.bytesReceived + data.size());
    CHECK(after.unread == data.size());
    CHECK(find(serverInode).bytesAcked >= data.size());
    CHECK(find(serverInode).rtt.count() > 0);

    std::string buffer(data.size(), '\0');
    std::size_t got = 0;
    while (got < buffer.size()) {
        const auto n = ::read(pair.client, buffer.data() + got, buffer.size() - got);
        REQUIRE(n > 0);
        got += static_cast<std::size_t>(n);
    }
    const auto read = find(clientInode);
    CHECK(read.unread == 0);
    CHECK(read.bytesReceived == after.bytesReceived);
}
