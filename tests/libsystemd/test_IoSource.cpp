#include "EventLoop.h"
#include "libsystemd/IoSource.h"
#include "util/UniqueFd.h"

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <fcntl.h>
#include <memory>
#include <stdexcept>
#include <string>
#include <sys/epoll.h>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

struct Pipe {
    UniqueFd read;
    UniqueFd write;
};

Pipe newPipe() {
    std::array<int, 2> fds{-1, -1};
    REQUIRE(::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void put(const Pipe& pipe, char byte = 'x') {
    REQUIRE(::write(pipe.write.get(), &byte, 1) == 1);
}

void drain(const Pipe& pipe) {
    std::array<char, 64> buffer{};
    while (::read(pipe.read.get(), buffer.data(), buffer.size()) > 0) {
    }
}

} // namespace

TEST_CASE("an I/O source calls back with the events that are ready") {
    auto loop = test::newLoop();
    const Pipe pipe = newPipe();
    std::vector<std::uint32_t> seen;
    auto io = libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN, [&](std::uint32_t revents) {
        seen.push_back(revents);
        drain(pipe);
    });
    REQUIRE(io);
    CHECK(io->fd() == pipe.read.get());
    CHECK(io->events() == EPOLLIN);
    CHECK(io->enabled());
    test::spin(loop.get());
    CHECK(seen.empty()); // nothing to read yet

    put(pipe);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return seen.size() == 1; }));
    CHECK((seen[0] & EPOLLIN) != 0);
    test::spin(loop.get());
    CHECK(seen.size() == 1); // drained: level-triggered, and nothing is left

    // The write end watched for writability: ready at once.
    std::uint32_t writable = 0;
    auto out = libsystemd::IoSource::create(loop.get(), pipe.write.get(), EPOLLOUT,
                                            [&](std::uint32_t revents) { writable = revents; });
    REQUIRE(out);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return writable != 0; }));
    CHECK(writable == EPOLLOUT);
}

TEST_CASE("an I/O source that is disabled does not call back, and its events can change") {
    auto loop = test::newLoop();
    const Pipe pipe = newPipe();
    int calls = 0;
    auto io = libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN, [&](std::uint32_t) {
        ++calls;
        drain(pipe);
    });
    REQUIRE(io);
    io->setEnabled(false);
    CHECK_FALSE(io->enabled());
    put(pipe);
    test::spin(loop.get());
    CHECK(calls == 0);

    io->setEnabled(true);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return calls == 1; }));

    // A read end never becomes writable: waiting for EPOLLOUT alone, the byte goes unnoticed.
    io->setEvents(EPOLLOUT);
    CHECK(io->events() == EPOLLOUT);
    CHECK(io->enabled());
    put(pipe);
    test::spin(loop.get());
    CHECK(calls == 1);
    io->setEvents(EPOLLIN);
    CHECK(test::runLoopUntil(loop.get(), [&] { return calls == 2; }));
}

TEST_CASE("an exception from an I/O source's callback reaches its error handler and the loop goes on") {
    auto loop = test::newLoop();
    const Pipe pipe = newPipe();
    int calls = 0;
    auto io = libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN, [&](std::uint32_t) {
        ++calls;
        drain(pipe);
        if (calls == 1) {
            throw std::runtime_error("parser on fire");
        }
        throw 42;
    });
    REQUIRE(io);
    std::vector<std::string> errors;
    io->setErrorHandler([&](std::string_view what) { errors.emplace_back(what); });
    put(pipe);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return calls == 1; }));
    CHECK(errors == std::vector<std::string>{"parser on fire"});

    // The source still works, and so does the loop.
    put(pipe);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return calls == 2; }));
    CHECK(errors == std::vector<std::string>{"parser on fire", "unknown exception"});

    // Without a handler it is swallowed.
    io->setErrorHandler({});
    put(pipe);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return calls == 3; }));
    CHECK(errors.size() == 2);
    CHECK(sd_event_get_state(loop.get()) != SD_EVENT_FINISHED);
}

TEST_CASE("an I/O source may destroy itself from its callback") {
    auto loop = test::newLoop();
    const Pipe pipe = newPipe();
    auto owned = std::make_unique<libsystemd::IoSource>();
    std::string seen;
    std::string error;
    std::string capture = "still here";
    int calls = 0;
    auto created =
        libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN, [&, capture](std::uint32_t) {
            ++calls;
            owned.reset();
            seen = capture; // the callback's captures outlive the IoSource until it returns
            throw std::runtime_error("after the end"); // and its error handler too
        });
    REQUIRE(created);
    *owned = std::move(*created);
    owned->setErrorHandler([&](std::string_view what) { error = what; });
    put(pipe); // never drained: a source still alive would be called again
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !owned; }));
    CHECK(seen == "still here");
    CHECK(error == "after the end");
    test::spin(loop.get());
    CHECK(calls == 1);
}

TEST_CASE("a destroyed I/O source never calls back, and leaves its descriptor open") {
    auto loop = test::newLoop();
    const Pipe pipe = newPipe();
    int calls = 0;
    {
        auto io = libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN,
                                               [&](std::uint32_t) { ++calls; });
        REQUIRE(io);
        put(pipe);
    }
    test::spin(loop.get());
    CHECK(calls == 0);
    CHECK(::fcntl(pipe.read.get(), F_GETFD) >= 0);

    // The same descriptor can be watched again.
    auto again = libsystemd::IoSource::create(loop.get(), pipe.read.get(), EPOLLIN, [&](std::uint32_t) {
        ++calls;
        drain(pipe);
    });
    REQUIRE(again);
    CHECK(test::runLoopUntil(loop.get(), [&] { return calls == 1; }));
}

TEST_CASE("an I/O source that cannot be set up says why") {
    auto loop = test::newLoop();
    auto io = libsystemd::IoSource::create(loop.get(), -1, EPOLLIN, [](std::uint32_t) {});
    REQUIRE_FALSE(io);
    CHECK(io.error().message.find("on the event loop") != std::string::npos);

    libsystemd::IoSource empty;
    CHECK_FALSE(empty);
    CHECK(empty.fd() == -1);
    CHECK(empty.events() == 0);
    CHECK_FALSE(empty.enabled());
    empty.setEvents(EPOLLIN);
    empty.setEnabled(true);
    CHECK_FALSE(empty.enabled());
}
