#include "workhost/WorkHostMessage.h"

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

using namespace nicer::workhost;

TEST_CASE("a message travels as its fields joined by NUL bytes, empty fields included", "[WorkHostMessage]") {
    const Message m{"start", "", "a b", "x"};
    const std::string packet = encodeMessage(m);
    CHECK(packet == std::string("start\0\0a b\0x", 12));
    auto back = decodeMessage(packet);
    REQUIRE(back);
    CHECK(*back == m);
    CHECK_FALSE(decodeMessage(""));
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
    CHECK_THAT(error({"start", "a", "19"}), Catch::Contains("at least 6"));
    CHECK_THAT(error({"start", "a", "x", "/bin/true", "", "1", "true"}), Catch::Contains("nice 'x'"));
    CHECK_THAT(error({"start", "a", "19", "/bin/true", "", "3", "true"}), Catch::Contains("argc 3"));
    CHECK_THAT(error({"start", "a", "19", "/bin/true", "", "0"}), Catch::Contains("argc 0"));
    // The name becomes a cgroup under the work's leaf: no way up or out of it.
    CHECK_THAT(error({"start", "../host", "19", "/bin/true", "", "1", "true"}),
               Catch::Contains("cannot name"));
    CHECK_THAT(error({"start", "..", "19", "/bin/true", "", "1", "true"}), Catch::Contains("cannot name"));
}

TEST_CASE("the instance is named exactly after the user, or not at all", "[WorkHostMessage]") {
    CHECK(workUnitFor("alice") == "nicer-work@alice.service");
    CHECK(workUnitFor("john-doe.2") == "nicer-work@john-doe.2.service");
    // systemd would escape these, and polkit would then compare another name with the user's.
    CHECK(workUnitFor("a b").empty());
    CHECK(workUnitFor("domain\\user").empty());
    CHECK(workUnitFor("").empty());
    CHECK(workHostSocket(1000) == "/run/user/1000/nicer/work-host.socket");
}

TEST_CASE("messages keep their bounds on a SOCK_SEQPACKET pair, and a closed peer reads as empty",
          "[WorkHostMessage]") {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
    REQUIRE(sendMessage(fds[0], {"hello", "/nicer.slice/nicer-work@alice.service/work"}));
    REQUIRE(sendMessage(fds[0], {"exited", "nicer-work-1.service", "killed by SIGTERM"}));
    auto first = receiveMessage(fds[1]);
    auto second = receiveMessage(fds[1]);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(*first == Message{"hello", "/nicer.slice/nicer-work@alice.service/work"});
    CHECK(*second == Message{"exited", "nicer-work-1.service", "killed by SIGTERM"});
    const Message huge{"start", std::string(kMaxMessageBytes, 'x')};
    CHECK_FALSE(sendMessage(fds[0], huge));
    ::close(fds[0]);
    auto closed = receiveMessage(fds[1]);
    REQUIRE(closed);
    CHECK(closed->empty());
    ::close(fds[1]);
}
