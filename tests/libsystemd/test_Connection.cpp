#include "Child.h"
#include "EventLoop.h"
#include "libsystemd/Connection.h"
#include "libsystemd/Message.h"
#include "libsystemd/RestartableBus.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using namespace nicer;

namespace {

/// What is written to standard error while it lives (the log, there without a journal).
class CapturedStderr {
public:
    CapturedStderr()
        : m_file(std::tmpfile())
        , m_saved(::dup(STDERR_FILENO)) {
        REQUIRE(m_file != nullptr);
        REQUIRE(m_saved >= 0);
        std::fflush(stderr);
        REQUIRE(::dup2(::fileno(m_file), STDERR_FILENO) >= 0);
    }
    ~CapturedStderr() {
        restore();
        std::fclose(m_file);
    }
    CapturedStderr(const CapturedStderr&) = delete;
    CapturedStderr& operator=(const CapturedStderr&) = delete;

    /// Standard error as it was, and what was written meanwhile.
    std::string text() {
        restore();
        std::string text;
        std::rewind(m_file);
        for (int c = std::fgetc(m_file); c != EOF; c = std::fgetc(m_file)) {
            text += static_cast<char>(c);
        }
        return text;
    }

private:
    void restore() {
        if (m_saved >= 0) {
            std::fflush(stderr);
            ::dup2(m_saved, STDERR_FILENO);
            ::close(m_saved);
            m_saved = -1;
        }
    }

    std::FILE* m_file;
    int m_saved;
};

constexpr const char* kPingRule = "type='signal',interface='org.nicer.Test',member='Ping'";

/// Ping from @p client, a second connection to the bus.
void ping(sd_bus* client) {
    REQUIRE(sd_bus_emit_signal(client, "/org/nicer/Test", "org.nicer.Test", "Ping", "") >= 0);
    REQUIRE(sd_bus_flush(client) >= 0);
}

/// A call to the bus daemon itself: org.freedesktop.DBus.GetId, answered with the bus's id.
libsystemd::BusMessagePtr getId(sd_bus* bus) {
    sd_bus_message* call = nullptr;
    REQUIRE(sd_bus_message_new_method_call(bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "GetId") >= 0);
    return libsystemd::BusMessagePtr(call);
}

/// Adds kPingRule on @p connection, counting into @p pings, and runs @p loop until the bus installed it.
libsystemd::BusSlot watchPings(sd_event* loop, libsystemd::Connection& connection, int& pings,
                               const libsystemd::MessageCallback& onPing = {}) {
    bool installed = false;
    auto slot = connection.addMatch(
        kPingRule,
        [&pings, onPing](sd_bus_message* message) {
            ++pings;
            if (onPing) {
                onPing(message);
            }
        },
        [&installed](sd_bus_message* reply) {
            CHECK(sd_bus_message_get_error(reply) == nullptr);
            installed = true;
        });
    REQUIRE(slot);
    REQUIRE(test::runLoopUntil(loop, [&] { return installed; }));
    return std::move(*slot);
}

/// A connection whose match on Ping throws, and a client that pings it.
struct ThrowingMatch {
    explicit ThrowingMatch(libsystemd::ErrorHandler onError)
        : connection(loop.get(), libsystemd::BusTarget::at(bus.address()),
                     {.connected = {}, .lost = {}, .onError = std::move(onError)})
        , client(loop.get(), libsystemd::BusTarget::at(bus.address())) {
        REQUIRE(connection.connect());
        REQUIRE(client.connect());
        slot = watchPings(loop.get(), connection, pings,
                          [](sd_bus_message*) { throw std::runtime_error("no ping"); });
    }
    /// Pings, and runs the loop until the match's callback has run @p count times in all.
    bool pingUntil(int count) {
        ping(client.bus());
        return test::runLoopUntil(loop.get(), [&] { return pings == count; });
    }

    test::RestartableBus bus;
    libsystemd::EventPtr loop = test::newLoop();
    libsystemd::Connection connection;
    libsystemd::Connection client;
    int pings = 0;
    libsystemd::BusSlot slot;
};

} // namespace

TEST_CASE("a match's callback gets the signals, until its slot is dropped", "[Connection]") {
    test::RestartableBus bus;
    auto loop = test::newLoop();
    libsystemd::Connection connection(loop.get(), libsystemd::BusTarget::at(bus.address()));
    REQUIRE(connection.connect());
    CHECK(connection.isOpen());
    int pings = 0;
    auto slot = watchPings(loop.get(), connection, pings);
    libsystemd::Connection client(loop.get(), libsystemd::BusTarget::at(bus.address()));
    REQUIRE(client.connect());
    ping(client.bus());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return pings == 1; }));

    slot.reset();
    ping(client.bus());
    CHECK_FALSE(test::runLoopUntil(
        loop.get(), [&] { return pings > 1; }, std::chrono::milliseconds(300)));
}

TEST_CASE("an asynchronous call's callback gets the reply, and may drop its own slot", "[Connection]") {
    test::RestartableBus bus;
    auto loop = test::newLoop();
    libsystemd::Connection connection(loop.get(), libsystemd::BusTarget::at(bus.address()));
    REQUIRE(connection.connect());
    std::string id;
    libsystemd::BusSlot call;
    auto made = connection.callAsync(
        getId(connection.bus()).get(),
        [&](sd_bus_message* reply) {
            call.reset(); // its state lives on until the callback returns (ASan checks it)
            REQUIRE(sd_bus_message_get_error(reply) == nullptr);
            const char* text = nullptr;
            libsystemd::MessageReader in(reply);
            in.read("s", &text);
            id = text != nullptr ? text : "";
        },
        1'000'000);
    REQUIRE(made);
    call = std::move(*made);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !id.empty(); }));
    CHECK(id.size() == 32); // the bus's id: 128 bits in hex
    CHECK_FALSE(call);
}

TEST_CASE("an exception from a match's or a call's callback goes to the error handler, and the loop runs on",
          "[Connection]") {
    std::vector<std::string> errors;
    ThrowingMatch t([&](std::string_view what) { errors.emplace_back(what); });
    REQUIRE(t.pingUntil(1));
    REQUIRE(t.pingUntil(2));
    CHECK(errors == std::vector<std::string>{"no ping", "no ping"});

    bool answered = false;
    auto call = t.connection.callAsync(
        getId(t.connection.bus()).get(),
        [&](sd_bus_message*) {
            answered = true;
            throw 42;
        },
        1'000'000);
    REQUIRE(call);
    REQUIRE(test::runLoopUntil(t.loop.get(), [&] { return answered; }));
    CHECK(errors.back() == "unknown exception");
    // Still connected, and still served.
    CHECK(t.connection.isOpen());
    REQUIRE(t.pingUntil(3));
}

TEST_CASE("without an error handler, what a callback throws is logged, and the loop runs on",
          "[Connection]") {
    ThrowingMatch t({});
    CapturedStderr log;
    const bool pinged = t.pingUntil(1);
    const std::string text = log.text();
    REQUIRE(pinged);
    CHECK_THAT(text, Catch::Contains("a D-Bus callback failed: no ping"));
    REQUIRE(t.pingUntil(2));
}

TEST_CASE("a bus daemon that restarts: the loss is told, and connect() calls the connected callback again, "
          "whose matches work",
          "[Connection]") {
    test::RestartableBus bus;
    auto loop = test::newLoop();
    int connected = 0;
    int lost = 0;
    int pings = 0;
    libsystemd::BusSlot match;
    bool installed = false;
    libsystemd::Connection* self = nullptr;
    libsystemd::Connection connection(loop.get(), libsystemd::BusTarget::at(bus.address()),
                                      {.connected = [&](sd_bus*) -> Result<void> {
                                           ++connected;
                                           installed = false;
                                           auto made = self->addMatch(
                                               kPingRule, [&](sd_bus_message*) { ++pings; },
                                               [&](sd_bus_message*) { installed = true; });
                                           if (!made) {
                                               return made.error();
                                           }
                                           match = std::move(*made);
                                           return {};
                                       },
                                       .lost = [&] { ++lost; },
                                       .onError = {}});
    self = &connection;
    REQUIRE(connection.connect());
    CHECK(connected == 1);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return installed; }));

    bus.stop();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return lost == 1; }));
    CHECK_FALSE(connection.isOpen());
    const auto refused = connection.connect();
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::Unavailable);
    CHECK(connected == 1);

    bus.start();
    REQUIRE(connection.connect());
    CHECK(connection.isOpen());
    CHECK(connected == 2);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return installed; }));
    libsystemd::Connection client(loop.get(), libsystemd::BusTarget::at(bus.address()));
    REQUIRE(client.connect());
    ping(client.bus());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return pings == 1; }));
    CHECK(lost == 1);
}

TEST_CASE("a connected callback that fails drops the new connection, and connect() says why",
          "[Connection]") {
    test::RestartableBus bus;
    auto loop = test::newLoop();
    libsystemd::Connection connection(
        loop.get(), libsystemd::BusTarget::at(bus.address()),
        {.connected = [](sd_bus*) -> Result<void> { return Error{"the name is taken"}; },
         .lost = {},
         .onError = {}});
    const auto done = connection.connect();
    REQUIRE_FALSE(done);
    CHECK(done.error().message == "the name is taken");
    CHECK(done.error().kind == ErrorKind::Failed);
    CHECK_FALSE(connection.isOpen());
    CHECK(connection.bus() == nullptr);
}
