#include "workhost/WorkHostMessage.h"

#include <catch2/catch.hpp>

#include <string>
#include <sys/socket.h>
#include <unistd.h>

using namespace nicer::workhost;

namespace {

/// A connected SOCK_SEQPACKET pair, closed with the scope.
struct SeqPacketPair {
    int fds[2] = {-1, -1};
    SeqPacketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0); }
    ~SeqPacketPair() {
        for (int fd : fds) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }
    SeqPacketPair(const SeqPacketPair&) = delete;
    SeqPacketPair& operator=(const SeqPacketPair&) = delete;
};

const std::string kLimitText = std::to_string(kMaxMessageBytes);

} // namespace

TEST_CASE("a message travels as its verb and fields joined by NUL bytes, empty fields included",
          "[WorkHostMessage]") {
    const Message m{Verb::Start, {"", "a b", "x"}};
    const std::string packet = encodeMessage(m);
    CHECK(packet == std::string("start\0\0a b\0x", 12));
    auto back = decodeMessage(packet);
    REQUIRE(back);
    CHECK(*back == m);
    CHECK_FALSE(decodeMessage(""));
    const Message bare{Verb::Stop, {}};
    CHECK(encodeMessage(bare) == "stop");
    CHECK(decodeMessage("stop").value() == bare);
}

TEST_CASE("every verb has its own keyword and reads back as itself, and an unknown one is an error naming it",
          "[WorkHostMessage]") {
    for (std::size_t i = 0; i < kVerbKeywords.size(); ++i) {
        const auto verb = static_cast<Verb>(i);
        auto back = decodeMessage(std::string(verbKeyword(verb)) + std::string("\0x", 2));
        REQUIRE(back);
        CHECK(back->verb == verb);
        CHECK(back->fields == std::vector<std::string>{"x"});
    }
    auto unknown = decodeMessage(std::string("resize") + '\0' + "nicer-work-1.service");
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().message, Catch::Contains("'resize'") && Catch::Contains("different versions"));
}

TEST_CASE("a start request survives the link: argv and the environment apart by argc", "[WorkHostMessage]") {
    StartRequest r;
    r.name = "nicer-work-2.service";
    r.nice = 19;
    r.executable = "/usr/bin/md5sum";
    r.workingDirectory = "/home/alice";
    r.argv = {"md5sum", "/dev/zero"};
    r.environment = {"HOME=/home/alice", "LANG=C.UTF-8"};
    auto back = parseStart(startMessage(r));
    REQUIRE(back);
    CHECK(back->name == r.name);
    CHECK(back->nice == 19);
    CHECK(back->executable == r.executable);
    CHECK(back->workingDirectory == r.workingDirectory);
    CHECK(back->argv == r.argv);
    CHECK(back->environment == r.environment);
}

TEST_CASE("a start request that is not whole is refused with what is wrong", "[WorkHostMessage]") {
    const auto error = [](const Message& m) {
        auto parsed = parseStart(m);
        REQUIRE_FALSE(parsed);
        return parsed.error().message;
    };
    CHECK_THAT(error({Verb::Start, {"a", "19"}}), Catch::Contains("at least 6"));
    CHECK_THAT(error({Verb::Start, {"a", "x", "/bin/true", "", "1", "true"}}), Catch::Contains("nice 'x'"));
    CHECK_THAT(error({Verb::Start, {"a", "19", "/bin/true", "", "3", "true"}}), Catch::Contains("argc 3"));
    CHECK_THAT(error({Verb::Start, {"a", "19", "/bin/true", "", "0"}}), Catch::Contains("argc 0"));
    // The name becomes a cgroup under the work's leaf: no way up or out of it.
    CHECK_THAT(error({Verb::Start, {"../host", "19", "/bin/true", "", "1", "true"}}),
               Catch::Contains("cannot name"));
    CHECK_THAT(error({Verb::Start, {"..", "19", "/bin/true", "", "1", "true"}}),
               Catch::Contains("cannot name"));
}

TEST_CASE("the work host of a user is the system unit and the socket named after the uid",
          "[WorkHostMessage]") {
    CHECK(workUnitFor(1000) == "nicer-work@1000.service");
    CHECK(workUnitFor(0) == "nicer-work@0.service");
    CHECK(workHostSocket(1000) == "/run/nicer/work/1000.socket");
}

TEST_CASE("messages keep their bounds on a SOCK_SEQPACKET pair, and a closed peer reads as no message",
          "[WorkHostMessage]") {
    SeqPacketPair pair;
    REQUIRE(sendMessage(pair.fds[0], {Verb::Hello, {"/nicer.slice/nicer-work@1000.service/work"}}));
    REQUIRE(sendMessage(pair.fds[0], {Verb::Exited, {"nicer-work-1.service", "killed by SIGTERM"}}));
    auto first = receiveMessage(pair.fds[1]);
    auto second = receiveMessage(pair.fds[1]);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(*first == Message{Verb::Hello, {"/nicer.slice/nicer-work@1000.service/work"}});
    CHECK(*second == Message{Verb::Exited, {"nicer-work-1.service", "killed by SIGTERM"}});
    ::close(pair.fds[0]);
    pair.fds[0] = -1;
    auto closed = receiveMessage(pair.fds[1]);
    REQUIRE(closed);
    CHECK_FALSE(closed->has_value());
}

TEST_CASE("a message of the limit's size travels whole, one byte more is refused before it is sent",
          "[WorkHostMessage]") {
    SeqPacketPair pair;
    // "start" and its NUL take 6 bytes of the packet.
    const Message atLimit{Verb::Start, {std::string(kMaxMessageBytes - 6, 'x')}};
    REQUIRE(encodeMessage(atLimit).size() == kMaxMessageBytes);
    REQUIRE(sendMessage(pair.fds[0], atLimit));
    auto whole = receiveMessage(pair.fds[1]);
    REQUIRE(whole);
    CHECK(*whole == atLimit);

    const Message overLimit{Verb::Start, {std::string(kMaxMessageBytes - 5, 'x')}};
    auto refused = sendMessage(pair.fds[0], overLimit);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("'start'") && Catch::Contains(kLimitText));
    // Nothing of it was sent: the link carries the next message, and that one alone.
    REQUIRE(sendMessage(pair.fds[0], {Verb::Stop, {"nicer-work-1.service"}}));
    auto next = receiveMessage(pair.fds[1]);
    REQUIRE(next);
    CHECK(*next == Message{Verb::Stop, {"nicer-work-1.service"}});
}

TEST_CASE("a packet over the limit is an error naming the limit, never a shortened message",
          "[WorkHostMessage]") {
    SeqPacketPair pair;
    const auto sendRaw = [&](const std::string& packet) {
        REQUIRE(::send(pair.fds[0], packet.data(), packet.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(packet.size()));
    };
    SECTION("far over it: the kernel cuts it (MSG_TRUNC)") {
        // 150 KiB fit the kernel's default socket buffer (208 KiB), so a peer can send it.
        sendRaw(std::string("start\0", 6) + std::string(150 * 1024, 'x'));
    }
    SECTION("one byte over it: the packet fills the receiver's buffer, uncut") {
        sendRaw(std::string("start\0", 6) + std::string(kMaxMessageBytes - 5, 'x'));
    }
    auto over = receiveMessage(pair.fds[1]);
    REQUIRE_FALSE(over);
    CHECK_THAT(over.error().message, Catch::Contains(kLimitText) && Catch::Contains("limit"));
    // The packet is gone whole: the next one reads as itself, not as the rest of the long one.
    REQUIRE(sendMessage(pair.fds[0], {Verb::Stop, {"nicer-work-1.service"}}));
    auto next = receiveMessage(pair.fds[1]);
    REQUIRE(next);
    CHECK(*next == Message{Verb::Stop, {"nicer-work-1.service"}});
}
