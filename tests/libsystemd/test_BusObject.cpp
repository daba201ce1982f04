// libsystemd::BusObject on a real dbus-daemon: its getters and handlers answer a second connection's calls,
// and what one throws comes back as a D-Bus error, with the loop running on.
#include "EventLoop.h"
#include "libsystemd/BusObject.h"
#include "libsystemd/Connection.h"
#include "libsystemd/RestartableBus.h"

#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>

using namespace nicer;

namespace {

constexpr const char* kPath = "/org/nicer/Test";
constexpr const char* kInterface = "org.nicer.Test";

/// What a call got back: the error's name and message, or the reply's one string (if it has one).
struct Answer {
    std::string error;
    std::string message;
    std::string value;
};

/// A bus, an object published on one connection, and a client on another, on one loop.
struct Published {
    explicit Published(libsystemd::BusInterface members)
        : server(loop.get(), libsystemd::BusTarget::at(bus.address()))
        , client(loop.get(), libsystemd::BusTarget::at(bus.address())) {
        REQUIRE(server.connect());
        REQUIRE(client.connect());
        auto published = libsystemd::BusObject::publish(server.bus(), kPath, kInterface, std::move(members));
        REQUIRE(published);
        object = std::move(*published);
    }

    /// Calls @p interface.@p member at kPath on the server, with one string argument when @p argument is
    /// given, and runs the loop until the answer.
    Answer call(const char* interface, const char* member, const std::optional<std::string>& argument = {}) {
        auto message = newCall(interface, member);
        if (argument) {
            REQUIRE(sd_bus_message_append(message.get(), "s", argument->c_str()) >= 0);
        }
        return send(message.get(), false);
    }

    /// Reads the string property @p name through org.freedesktop.DBus.Properties.Get.
    Answer get(const char* name) {
        auto message = newCall("org.freedesktop.DBus.Properties", "Get");
        REQUIRE(sd_bus_message_append(message.get(), "ss", kInterface, name) >= 0);
        return send(message.get(), true);
    }

    libsystemd::BusMessagePtr newCall(const char* interface, const char* member) {
        const char* serverName = nullptr;
        REQUIRE(sd_bus_get_unique_name(server.bus(), &serverName) >= 0);
        sd_bus_message* raw = nullptr;
        REQUIRE(sd_bus_message_new_method_call(client.bus(), &raw, serverName, kPath, interface, member) >=
                0);
        return libsystemd::BusMessagePtr(raw);
    }

    /// Sends @p message and runs the loop until its answer: a string, in a variant when @p variant.
    Answer send(sd_bus_message* message, bool variant) {
        std::optional<Answer> answer;
        auto slot = client.callAsync(
            message,
            [&](sd_bus_message* reply) {
                Answer a;
                const char* text = nullptr;
                if (const sd_bus_error* e = sd_bus_message_get_error(reply)) {
                    a.error = e->name;
                    a.message = e->message ? e->message : "";
                } else if ((variant ? sd_bus_message_read(reply, "v", "s", &text)
                                    : sd_bus_message_read(reply, "s", &text)) > 0) {
                    a.value = text;
                }
                answer = a;
            },
            5'000'000);
        REQUIRE(slot);
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return answer.has_value(); }));
        return *answer;
    }

    test::RestartableBus bus;
    libsystemd::EventPtr loop = test::newLoop();
    libsystemd::Connection server;
    libsystemd::Connection client;
    std::unique_ptr<libsystemd::BusObject> object;
};

/// An interface of one property and three methods: Echo answers its argument, Fail throws, Refuse sets a
/// D-Bus error of its own.
libsystemd::BusInterface testMembers(std::string& state, int& calls) {
    libsystemd::BusInterface members;
    members.properties = {
        {"State", "s", libsystemd::PropertyChanges::Read,
         [&state](sd_bus_message* reply, sd_bus_error*) {
             if (state == "throw") {
                 throw std::runtime_error("the state cannot be read");
             }
             return sd_bus_message_append(reply, "s", state.c_str());
         }},
    };
    members.methods = {
        {"Echo", "s", "s",
         [&calls](sd_bus_message* call, sd_bus_error*) {
             ++calls;
             const char* text = nullptr;
             if (const int r = sd_bus_message_read(call, "s", &text); r < 0) {
                 return r;
             }
             return sd_bus_reply_method_return(call, "s", text);
         }},
        {"Fail", "", "",
         [&calls](sd_bus_message*, sd_bus_error*) -> int {
             ++calls;
             throw std::runtime_error("the handler failed on purpose");
         }},
        {"Refuse", "", "",
         [&calls](sd_bus_message*, sd_bus_error* error) {
             ++calls;
             return sd_bus_error_set(error, "org.nicer.Test.Error.Refused", "not now");
         }},
    };
    members.busSignals = {{"Changed", "s"}};
    return members;
}

} // namespace

TEST_CASE("a bus object's handlers and getters answer calls, each through its own std::function",
          "[BusObject]") {
    std::string state = "idle";
    int calls = 0;
    Published published(testMembers(state, calls));

    CHECK(published.call(kInterface, "Echo", std::string("hello")).value == "hello");
    CHECK(published.get("State").value == "idle");
    state = "busy";
    CHECK(published.get("State").value == "busy");

    const auto refused = published.call(kInterface, "Refuse");
    CHECK(refused.error == "org.nicer.Test.Error.Refused");
    CHECK(refused.message == "not now");
    CHECK(calls == 2);
}

TEST_CASE("what a bus object's handler or getter throws is a D-Bus error reply, and the loop runs on",
          "[BusObject]") {
    std::string state = "throw";
    int calls = 0;
    Published published(testMembers(state, calls));

    const auto failed = published.call(kInterface, "Fail");
    CHECK(failed.error == "org.freedesktop.DBus.Error.Failed");
    CHECK(failed.message == "the handler failed on purpose");
    const auto unreadable = published.get("State");
    CHECK(unreadable.error == "org.freedesktop.DBus.Error.Failed");
    CHECK(unreadable.message == "the state cannot be read");
    // The object still serves.
    CHECK(published.call(kInterface, "Echo", std::string("after")).value == "after");
    CHECK(calls == 2);
}

TEST_CASE("a method a bus object does not have is refused by sd-bus, and a destroyed object answers nothing",
          "[BusObject]") {
    std::string state = "idle";
    int calls = 0;
    Published published(testMembers(state, calls));

    CHECK(published.call(kInterface, "Missing").error == "org.freedesktop.DBus.Error.UnknownMethod");
    published.object.reset();
    const auto gone = published.call(kInterface, "Echo", std::string("hello"));
    CHECK_FALSE(gone.error.empty());
    CHECK(gone.value.empty());
    CHECK(calls == 0);
}
