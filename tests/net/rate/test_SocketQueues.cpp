#include "net/rate/SocketQueues.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace nicer::net;
using namespace std::chrono_literals;

TEST_CASE("/proc/net/tcp gives each socket's receive and send queue by inode, listeners left out",
          "[SocketQueues]") {
    // Lines as Linux 6.1 prints them: a listener with a backlog, a connection with unread data, one with
    // unsent data, and a closing socket no process holds (inode 0).
    const auto parsed = parseProcNetTcp(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000:1F90 00000000:0000 0A 00000000:00000003 00:00000000 00000000     0        0 639 1 "
        "0000000000000000 100 0 0 10 0\n"
        "   1: 0100007F:D2F0 0100007F:1F90 01 00000000:00F42400 00:00000000 00000000  1000        0 81234 1 "
        "0000000000000000 20 4 30 10 -1\n"
        "   2: 0100007F:D2F2 0100007F:1F90 01 00010000:00000000 01:00000014 00000000  1000        0 81235 1 "
        "0000000000000000 20 4 30 10 -1\n"
        "   3: 0100007F:D2F4 0100007F:1F90 06 00000000:00000000 03:00000BB8 00000000     0        0 0 3 "
        "0000000000000000\n",
        "fixture");
    REQUIRE(parsed.ok());
    CHECK(parsed->size() == 2);
    CHECK(parsed->at(81234) == SocketQueues{16000000, 0});
    CHECK(parsed->at(81235) == SocketQueues{0, 65536});
}

TEST_CASE("a malformed /proc/net/tcp line is an error naming the source and the line", "[SocketQueues]") {
    const auto bad =
        parseProcNetTcp("header\n   1: 0100007F:D2F0 0100007F:1F90 01 0000:zz 00:0 0 0 0 5\n", "snap");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message,
               Catch::StartsWith("snap line 2: the queues are not two hexadecimal numbers"));
    const auto shortLine = parseProcNetTcp("header\n   1: 0100007F:D2F0\n", "snap");
    REQUIRE_FALSE(shortLine.ok());
    CHECK_THAT(shortLine.error().message, Catch::Contains("expected at least 10 fields"));
}

TEST_CASE("the unread bytes of this process's own loopback connection are found through /proc",
          "[SocketQueues]") {
    // A real connection on loopback: the peer writes 30000 bytes that this process does not read.
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    const int client = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    const int server = ::accept(listener, nullptr, nullptr);
    REQUIRE(server >= 0);

    const auto before = tcpQueuesOf({::getpid()});
    REQUIRE(before.ok());
    std::string data(30000, 'x');
    REQUIRE(::write(server, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
    SocketQueues after;
    for (int i = 0; i < 100 && after.unread < before->unread + data.size(); ++i) {
        std::this_thread::sleep_for(10ms); // loopback delivers at once; the loop only guards a slow kernel
        after = tcpQueuesOf({::getpid()}).value();
    }
    CHECK(after.unread == before->unread + data.size());
    // Read, the bytes leave the queue.
    std::string buffer(data.size(), '\0');
    std::size_t got = 0;
    while (got < buffer.size()) {
        const auto n = ::read(client, buffer.data() + got, buffer.size() - got);
        REQUIRE(n > 0);
        got += static_cast<std::size_t>(n);
    }
    CHECK(tcpQueuesOf({::getpid()}).value().unread == before->unread);
    // A process that is gone, or has no sockets, adds nothing.
    CHECK(tcpQueuesOf({999999999}).value() == SocketQueues{});
    for (const int fd : {client, server, listener}) {
        ::close(fd);
    }
}
