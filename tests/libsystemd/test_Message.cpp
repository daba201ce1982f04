#include "libsystemd/Bus.h"
#include "libsystemd/Message.h"
#include "util/UniqueFd.h"

#include <catch2/catch.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <vector>

using namespace nicer;
using libsystemd::MessageReader;
using libsystemd::MessageWriter;

namespace {

/// A bus over one end of a socket pair, no daemon: enough to make messages, which are never sent.
struct LocalBus {
    // The bus before its peer, so that the peer closes first: the bus's flush on closing then ends at once
    // instead of waiting out sd-bus's 90 s for a peer that never answers its authentication.
    libsystemd::BusPtr bus;
    UniqueFd peer;

    LocalBus() {
        std::array<int, 2> fds{-1, -1};
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds.data()) == 0);
        peer.reset(fds[1]);
        sd_bus* raw = nullptr;
        REQUIRE(sd_bus_new(&raw) >= 0);
        bus.reset(raw);
        REQUIRE(sd_bus_set_fd(raw, fds[0], fds[0]) >= 0);
        REQUIRE(sd_bus_start(raw) >= 0);
    }

    libsystemd::BusMessagePtr newCall() const {
        sd_bus_message* m = nullptr;
        REQUIRE(sd_bus_message_new_method_call(bus.get(), &m, "org.example.Test", "/org/example/Test",
                                               "org.example.Test", "Method") >= 0);
        return libsystemd::BusMessagePtr(m);
    }
};

/// Ends writing @p m and starts reading it from its first value.
void sealForReading(sd_bus_message* m) {
    REQUIRE(sd_bus_message_seal(m, 1, 0) >= 0);
    REQUIRE(sd_bus_message_rewind(m, 1) >= 0);
}

std::string signatureOf(sd_bus_message* m) {
    const char* signature = sd_bus_message_get_signature(m, 1);
    return signature != nullptr ? signature : "";
}

struct Entry {
    std::string name;
    std::uint32_t count = 0;
    bool flag = false;
};

} // namespace

TEST_CASE("what a MessageWriter writes, a MessageReader reads back") {
    const LocalBus local;
    const auto message = local.newCall();
    sd_bus_message* m = message.get();

    const std::vector<Entry> entries{{"one", 1, true}, {"two", 2, false}};
    const std::vector<std::uint32_t> numbers{7, 8, 9};
    MessageWriter out(m);
    out.append("su", "hello", std::uint32_t{42});
    out.open('a', "(sub)");
    for (const Entry& entry : entries) {
        out.open('r', "sub")
            .append("sub", entry.name.c_str(), entry.count, static_cast<int>(entry.flag))
            .close();
    }
    out.close();
    out.open('a', "s").appendBasic('s', "x").appendBasic('s', "y").close();
    out.open('v', "au").appendArray('u', numbers.data(), numbers.size() * sizeof(std::uint32_t)).close();
    out.open('a', "{sv}").open('e', "sv").append("s", "key").append("v", "d", 2.5).close().close();
    out.run([&] { return sd_bus_message_append(m, "t", std::uint64_t{1} << 40); });
    REQUIRE(out.ok());
    CHECK(out.result() == 0);
    CHECK(out.message() == m);
    CHECK(signatureOf(m) == "sua(sub)asva{sv}t");

    sealForReading(m);
    MessageReader in(m);
    const char* text = nullptr;
    std::uint32_t number = 0;
    CHECK(in.read("su", &text, &number));
    CHECK(std::string(text) == "hello");
    CHECK(number == 42);

    std::vector<Entry> readEntries;
    REQUIRE(in.enter('a', "(sub)"));
    while (in.enter('r', "sub")) { // false at the array's end, which is no failure
        Entry entry;
        const char* name = nullptr;
        int flag = 0;
        CHECK(in.read("sub", &name, &entry.count, &flag));
        entry.name = name;
        entry.flag = flag != 0;
        readEntries.push_back(entry);
        in.exit();
    }
    CHECK(in.ok());
    in.exit();
    REQUIRE(readEntries.size() == 2);
    CHECK(readEntries[1].name == "two");
    CHECK(readEntries[1].count == 2);
    CHECK(readEntries[0].flag);

    std::vector<std::string> strings;
    REQUIRE(in.enter('a', "s"));
    while (in.readBasic('s', &text)) {
        strings.emplace_back(text);
    }
    in.exit();
    CHECK(strings == std::vector<std::string>{"x", "y"});

    char type = 0;
    const char* contents = nullptr;
    REQUIRE(in.peekType(&type, &contents));
    CHECK(type == 'v');
    CHECK(std::string(contents) == "au");
    in.skip("v");

    REQUIRE(in.enter('a', "{sv}"));
    REQUIRE(in.enter('e', "sv"));
    double value = 0;
    CHECK(in.read("sv", &text, "d", &value));
    CHECK(std::string(text) == "key");
    CHECK(value == 2.5);
    in.exit();
    CHECK_FALSE(in.enter('e', "sv"));
    in.exit();

    std::uint64_t big = 0;
    CHECK(in.run([&] { return sd_bus_message_read(m, "t", &big); }) > 0);
    CHECK(big == std::uint64_t{1} << 40);
    CHECK(in.ok());
    CHECK(in.result() == 0);
    CHECK(sd_bus_message_at_end(m, 1) > 0);
}

TEST_CASE("a MessageWriter keeps its first error and does nothing after it") {
    const LocalBus local;
    const auto message = local.newCall();
    sd_bus_message* m = message.get();
    MessageWriter out(m);
    out.append("u", std::uint32_t{1});
    CHECK(out.ok());

    out.close(); // no container is open
    REQUIRE_FALSE(out.ok());
    const int first = out.result();
    CHECK(first == -EINVAL);

    out.append("s", "after").open('a', "s").appendBasic('s', "x").close();
    int ran = 0;
    out.run([&] {
        ++ran;
        return -EIO;
    });
    CHECK(ran == 0);
    CHECK(out.result() == first);
    CHECK(signatureOf(m) == "u"); // nothing after the failure reached the message
}

TEST_CASE("a MessageWriter keeps an error of a wrong type inside a container") {
    const LocalBus local;
    const auto message = local.newCall();
    MessageWriter out(message.get());
    out.open('a', "s").append("u", std::uint32_t{5}); // a number in an array of strings
    REQUIRE_FALSE(out.ok());
    const int first = out.result();
    CHECK(first < 0);
    out.appendBasic('s', "fine").close();
    CHECK(out.result() == first);

    // A step of its own that fails is kept the same way.
    const auto other = local.newCall();
    MessageWriter second(other.get());
    second.run([] { return -ENOMEM; }).append("s", "x");
    CHECK(second.result() == -ENOMEM);
    CHECK(signatureOf(other.get()).empty());
}

TEST_CASE("a MessageReader keeps its first error: a wrong type, then the end of the message") {
    const LocalBus local;
    const auto message = local.newCall();
    sd_bus_message* m = message.get();
    REQUIRE(MessageWriter(m).append("su", "text", std::uint32_t{3}).ok());
    sealForReading(m);

    MessageReader in(m);
    std::uint32_t number = 0;
    CHECK_FALSE(in.read("u", &number)); // the message holds a string first
    REQUIRE_FALSE(in.ok());
    const int first = in.result();
    CHECK(first == -ENXIO);

    // Later calls do nothing, even those that would succeed.
    const char* text = nullptr;
    CHECK_FALSE(in.read("s", &text));
    CHECK(text == nullptr);
    CHECK_FALSE(in.readBasic('s', &text));
    CHECK_FALSE(in.enter('a', "s"));
    in.exit();
    in.skip("u");
    CHECK_FALSE(in.peekType(nullptr, nullptr));
    int ran = 0;
    CHECK(in.run([&] {
        ++ran;
        return 1;
    }) == first);
    CHECK(ran == 0);
    CHECK(in.result() == first);
}

TEST_CASE("a MessageReader reading past the end of the message keeps that error") {
    const LocalBus local;
    const auto message = local.newCall();
    sd_bus_message* m = message.get();
    REQUIRE(MessageWriter(m).append("s", "only").ok());
    sealForReading(m);

    MessageReader in(m);
    const char* text = nullptr;
    REQUIRE(in.read("s", &text));
    CHECK(in.ok());
    CHECK_FALSE(in.read("s", &text)); // nothing is left
    REQUIRE_FALSE(in.ok());
    const int first = in.result();
    CHECK(first < 0);
    CHECK_FALSE(in.enter('r', "s"));
    CHECK(in.result() == first);
}

TEST_CASE("a MessageReader at the end of an array is not failed, and a reader step's 0 ends a loop") {
    const LocalBus local;
    const auto message = local.newCall();
    sd_bus_message* m = message.get();
    REQUIRE(MessageWriter(m).open('a', "u").close().append("u", std::uint32_t{9}).ok());
    sealForReading(m);

    MessageReader in(m);
    REQUIRE(in.enter('a', "u"));
    std::uint32_t number = 0;
    CHECK_FALSE(in.readBasic('u', &number)); // empty
    CHECK(in.run([&] { return sd_bus_message_read_basic(m, 'u', &number); }) == 0);
    CHECK(in.ok());
    in.exit();
    CHECK(in.read("u", &number));
    CHECK(number == 9);
    CHECK(in.result() == 0);
}
