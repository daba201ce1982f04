#include "DbusInterface.h"
#include "DbusTestSupport.h"
#include "api/BusNames.h"
#include "control/ParameterTable.h"
#include "dbus/service/DaemonService.h"
#include "dbus/wire/Codec.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;
using dbus::test::FakeDaemon;
using dbus::test::PrivateBus;
using dbus::test::ServedService;

namespace {

/// Calls @p method of nicerd's interface on @p bus with the arguments @p fill appends; the reply, or the
/// error's name and message.
struct Reply {
    libsystemd::BusMessagePtr message;
    std::string errorName;
    std::string errorMessage;
};

template <typename Fill>
Reply call(sd_bus* bus, const char* interface, const char* method, Fill&& fill) {
    sd_bus_message* m = nullptr;
    REQUIRE(sd_bus_message_new_method_call(bus, &m, api::kBusName, api::kObjectPath, interface, method) >= 0);
    libsystemd::BusMessagePtr owned(m);
    REQUIRE(fill(m) >= 0);
    libsystemd::BusError error;
    sd_bus_message* reply = nullptr;
    Reply result;
    if (sd_bus_call(bus, m, 0, error.get(), &reply) < 0) {
        result.errorName = error.name();
        result.errorMessage = error.message();
    }
    result.message.reset(reply);
    return result;
}

Reply setParameters(sd_bus* bus, const char* key, const char* type, auto value) {
    return call(bus, api::kInterface, "SetParameters",
                [&](sd_bus_message* m) { return sd_bus_message_append(m, "a{sv}", 1, key, type, value); });
}

/// Dispatches @p client's messages until @p done holds; a deadline bounds a stuck bus only.
template <typename Condition>
bool dispatchUntil(sd_bus* client, Condition&& done) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        while (sd_bus_process(client, nullptr) > 0) {
        }
        if (!done()) {
            sd_bus_wait(client, 100'000);
        }
    }
    return done();
}

} // namespace

TEST_CASE("the service publishes exactly the interface of resources/org.nicer.Daemon1.xml",
          "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = bus.connect();
    const auto reply = call(client.get(), "org.freedesktop.DBus.Introspectable", "Introspect",
                            [](sd_bus_message*) { return 0; });
    REQUIRE(reply.errorName.empty());
    const char* xml = nullptr;
    REQUIRE(sd_bus_message_read(reply.message.get(), "s", &xml) >= 0);
    const auto published = test::interfaceMembers(std::string(xml));
    REQUIRE_FALSE(published.empty());
    CHECK(published == test::interfaceMembersInFile(NICER_RESOURCES "/org.nicer.Daemon1.xml"));
    // Every parameter of the table is a property of its D-Bus type, in the XML too.
    for (const auto& info : control::parameterTable()) {
        CHECK(std::count(published.begin(), published.end(),
                         std::string("property ") + info.busName + " " + info.busSignature) == 1);
    }
    CHECK(std::count(published.begin(), published.end(),
                     std::string("property Downloads ") + api::kArraySignature<api::DownloadEntry>.data()) ==
          1);
}

TEST_CASE("each parameter property holds the daemon's value in its D-Bus unit", "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    daemon.state_.params.period = 250ms;
    daemon.state_.params.overloadThreshold = 6;
    ServedService service(bus, daemon);
    auto client = bus.connect();
    for (const auto& info : control::parameterTable()) {
        CAPTURE(info.busName);
        libsystemd::BusError error;
        sd_bus_message* reply = nullptr;
        REQUIRE(sd_bus_get_property(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                    info.busName, error.get(), &reply, info.busSignature) >= 0);
        libsystemd::BusMessagePtr owned(reply);
        if (info.type == control::ParameterType::Hours) {
            const char* text = nullptr;
            REQUIRE(sd_bus_message_read(reply, "s", &text) >= 0);
            CHECK(std::string(text) == info.getText(daemon.state_.params));
            continue;
        }
        double value = 0;
        if (info.busSignature[0] == 't') {
            std::uint64_t t = 0;
            REQUIRE(sd_bus_message_read(reply, "t", &t) >= 0);
            value = static_cast<double>(t);
        } else if (info.busSignature[0] == 'u') {
            std::uint32_t u = 0;
            REQUIRE(sd_bus_message_read(reply, "u", &u) >= 0);
            value = u;
        } else {
            REQUIRE(sd_bus_message_read(reply, "d", &value) >= 0);
        }
        CHECK(value == info.get(daemon.state_.params) * info.busScale);
    }
    std::uint32_t version = 0;
    libsystemd::BusError error;
    REQUIRE(sd_bus_get_property_trivial(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                        "ApiVersion", error.get(), 'u', &version) >= 0);
    // 10: the rules; 11: SetExclusivePrograms; 13: presence and the profiles; 14: the snooze; 15: the
    // profiles' memory and the sleep policy; 16: the memory rule.
    CHECK(version == 16);
}

TEST_CASE("the memory limit is published: the percentage set and the bytes in force",
          "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    daemon.state_.memoryMaxPercent = 25;
    daemon.state_.memoryMax = 0; // not in force
    ServedService service(bus, daemon);
    auto client = bus.connect();
    double percent = 0;
    std::uint64_t bytes = 1;
    libsystemd::BusError error;
    REQUIRE(sd_bus_get_property_trivial(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                        "MemoryMaxPercent", error.get(), 'd', &percent) >= 0);
    REQUIRE(sd_bus_get_property_trivial(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                        "MemoryMax", error.get(), 't', &bytes) >= 0);
    CHECK(percent == 25.0);
    CHECK(bytes == 0);
}

TEST_CASE("the actuator's note is published", "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    daemon.state_.actuatorNote = "the kernel runs the sched_ext scheduler lavd";
    ServedService service(bus, daemon);
    auto client = bus.connect();
    char* note = nullptr;
    libsystemd::BusError error;
    REQUIRE(sd_bus_get_property_string(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                       "ActuatorNote", error.get(), &note) >= 0);
    CHECK(std::string(note) == "the kernel runs the sched_ext scheduler lavd");
    std::free(note);
}

TEST_CASE("download states and the bandwidth mode are separate fields on the bus", "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    api::DownloadEntry failed;
    failed.name = "late.bin";
    failed.bytesTotal = 4096;
    failed.state = api::DownloadState::Failed;
    failed.reason = "the server answered 404 Not Found";
    failed.retryInSeconds = 600;
    api::DownloadEntry ok;
    ok.name = "done.bin";
    ok.bytesDone = ok.bytesTotal = 65536;
    ok.state = api::DownloadState::Ok;
    daemon.state_.downloads = {failed, ok};
    daemon.state_.bandwidthMode = "capped";
    daemon.state_.bandwidthCap = 1048576;
    ServedService service(bus, daemon);
    auto client = bus.connect();

    libsystemd::BusError error;
    sd_bus_message* reply = nullptr;
    REQUIRE(sd_bus_get_property(client.get(), api::kBusName, api::kObjectPath, api::kInterface, "Downloads",
                                error.get(), &reply, "a(sttdsbsx)") >= 0);
    libsystemd::BusMessagePtr owned(reply);
    REQUIRE(sd_bus_message_enter_container(reply, 'a', "(sttdsbsx)") > 0);
    const char *name = nullptr, *state = nullptr, *reason = nullptr;
    std::uint64_t done = 0, total = 0;
    double rate = -1;
    int verified = -1;
    std::int64_t retryIn = 0;
    REQUIRE(sd_bus_message_read(reply, "(sttdsbsx)", &name, &done, &total, &rate, &state, &verified, &reason,
                                &retryIn) > 0);
    CHECK(std::string(name) == "late.bin");
    CHECK(std::string(state) == "failed");
    CHECK(std::string(reason) == "the server answered 404 Not Found");
    CHECK(retryIn == 600);
    CHECK(verified == 0);
    REQUIRE(sd_bus_message_read(reply, "(sttdsbsx)", &name, &done, &total, &rate, &state, &verified, &reason,
                                &retryIn) > 0);
    CHECK(std::string(state) == "ok");
    CHECK(std::string(reason).empty());
    CHECK(retryIn == -1); // no retry planned
    CHECK(done == 65536);

    char* mode = nullptr;
    REQUIRE(sd_bus_get_property_string(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                       "BandwidthMode", error.get(), &mode) >= 0);
    CHECK(std::string(mode) == "capped");
    std::free(mode);
    std::uint64_t cap = 0;
    REQUIRE(sd_bus_get_property_trivial(client.get(), api::kBusName, api::kObjectPath, api::kInterface,
                                        "BandwidthCap", error.get(), 't', &cap) >= 0);
    CHECK(cap == 1048576);
}

TEST_CASE("SetParameters takes the table's names and types, all or nothing", "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = bus.connect();
    const control::ControllerParams before;
    const auto unchanged = [&] {
        std::lock_guard lock(daemon.mutex);
        return daemon.state_.params == before;
    };

    SECTION("one value changes only its parameter") {
        const auto r = setParameters(client.get(), "PeriodUSec", "t", std::uint64_t{500'000});
        CHECK(r.errorName.empty());
        control::ControllerParams expected;
        expected.period = 500ms;
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.state_.params == expected);
    }
    SECTION("an unknown name is refused, listing the known ones") {
        const auto r = setParameters(client.get(), "reserve-band", "d", 0.1);
        CHECK(r.errorName == "org.freedesktop.DBus.Error.InvalidArgs");
        CHECK_THAT(r.errorMessage,
                   Catch::Contains("'reserve-band'") && Catch::Contains(control::parameterNameList(true)));
        CHECK(unchanged());
    }
    SECTION("a value of the wrong type is refused, naming the type") {
        const auto r = setParameters(client.get(), "OverloadThreshold", "d", 2.0);
        CHECK(r.errorName == "org.freedesktop.DBus.Error.InvalidArgs");
        CHECK_THAT(r.errorMessage, Catch::Contains("OverloadThreshold") && Catch::Contains("u"));
        CHECK(unchanged());
    }
    SECTION("a period in a fraction of a millisecond is refused") {
        const auto r = setParameters(client.get(), "PeriodUSec", "t", std::uint64_t{250'500});
        CHECK_THAT(r.errorMessage, Catch::Contains("whole milliseconds"));
        CHECK(unchanged());
    }
    SECTION("a value out of range is refused with validate()'s words") {
        const auto r = setParameters(client.get(), "ReserveBand", "d", 0.7);
        CHECK(r.errorName == "org.freedesktop.DBus.Error.InvalidArgs");
        CHECK_THAT(r.errorMessage, Catch::Contains("reserve-band = 0.7 is out of range"));
        CHECK(unchanged());
    }
}

TEST_CASE("the Sample signal carries the sample's fields", "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = bus.connect();
    std::optional<api::Sample> received;
    sd_bus_slot* slot = nullptr;
    REQUIRE(sd_bus_match_signal(
                client.get(), &slot, nullptr, api::kObjectPath, api::kInterface, "Sample",
                [](sd_bus_message* m, void* userdata, sd_bus_error*) {
                    auto* out = static_cast<std::optional<api::Sample>*>(userdata);
                    api::Sample s;
                    if (dbus::codec::readFields(m, s) >= 0) {
                        *out = s;
                    }
                    return 0;
                },
                &received) >= 0);
    libsystemd::BusSlotPtr ownedSlot(slot);
    // The match is in place once the bus answered a call made after it.
    REQUIRE(sd_bus_call_method(client.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus.Peer", "Ping", nullptr, nullptr, "") >= 0);
    const api::Sample sent{42, 0.25, 0.5, 0.25, 0.375, 0.125, 3.0, 2, true, true, 83.25, "game"};
    service.run([&](dbus::DaemonService& s) { s.onSample(sent); });
    REQUIRE(dispatchUntil(client.get(), [&] { return received.has_value(); }));
    CHECK(received->timeUSec == 42);
    CHECK(received->foreground == 0.5);
    CHECK(received->multiplier == 3.0);
    CHECK(received->overloadCount == 2);
    CHECK(received->paused);
    CHECK(received->outside == 0.375);
    CHECK(received->quota == 0.125);
    CHECK(received->outsideSignal);
    CHECK(received->temperature == 83.25);
    CHECK(received->heldBy == "game");
}

namespace {

/// What a client saw of nicerd's signals: the Sample signals counted, and per PropertiesChanged the names of
/// the properties it carries (with the first download's name and bytes when Downloads is among them).
struct Announcements {
    int samples = 0;
    std::vector<std::vector<std::string>> changes;
    std::string firstDownload;
    std::uint64_t firstDownloadBytes = 0;
    bool unreadable = false; ///< a PropertiesChanged that was not (s a{sv} as) with values only

    static int onSample(sd_bus_message*, void* userdata, sd_bus_error*) {
        ++static_cast<Announcements*>(userdata)->samples;
        return 0;
    }
    // No Catch assertion in here: it would throw through sd-bus's C frames.
    static int onPropertiesChanged(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto* self = static_cast<Announcements*>(userdata);
        if (read(m, *self) < 0) {
            self->unreadable = true;
        }
        return 0;
    }
    static int read(sd_bus_message* m, Announcements& self) {
        const char* interface = nullptr;
        int r = sd_bus_message_read(m, "s", &interface);
        if (r < 0 || std::string(interface) != api::kInterface) {
            return -EINVAL;
        }
        std::vector<std::string> names;
        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0) {
            return r;
        }
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
            const char* name = nullptr;
            if ((r = sd_bus_message_read(m, "s", &name)) < 0) {
                return r;
            }
            names.emplace_back(name);
            if (names.back() == "Downloads") {
                const char *file = nullptr, *state = nullptr, *reason = nullptr;
                std::uint64_t done = 0, total = 0;
                double rate = 0;
                int verified = 0;
                std::int64_t retryIn = 0;
                if ((r = sd_bus_message_enter_container(m, 'v', "a(sttdsbsx)")) <= 0 ||
                    (r = sd_bus_message_enter_container(m, 'a', "(sttdsbsx)")) <= 0 ||
                    (r = sd_bus_message_read(m, "(sttdsbsx)", &file, &done, &total, &rate, &state, &verified,
                                             &reason, &retryIn)) <= 0) {
                    return r < 0 ? r : -EINVAL;
                }
                self.firstDownload = file;
                self.firstDownloadBytes = done;
                while ((r = sd_bus_message_skip(m, "(sttdsbsx)")) > 0) {
                }
                if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0 ||
                    (r = sd_bus_message_exit_container(m)) < 0) {
                    return r;
                }
            } else if ((r = sd_bus_message_skip(m, "v")) < 0) {
                return r;
            }
            if ((r = sd_bus_message_exit_container(m)) < 0) {
                return r;
            }
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0) {
            return r;
        }
        // The values travel with the names: nothing is only invalidated.
        if ((r = sd_bus_message_enter_container(m, 'a', "s")) < 0 || sd_bus_message_at_end(m, false) <= 0) {
            return -EINVAL;
        }
        self.changes.push_back(std::move(names));
        return 0;
    }
};

} // namespace

TEST_CASE("nicerd announces the downloads and BOINC's lists when they change, and only then",
          "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    api::DownloadEntry unit;
    unit.name = "unit.bin";
    unit.bytesTotal = 65536;
    unit.state = api::DownloadState::Downloading;
    daemon.state_.downloads = {unit};
    ServedService service(bus, daemon);
    auto client = bus.connect();
    Announcements seen;
    sd_bus_slot* sampleSlot = nullptr;
    REQUIRE(sd_bus_match_signal(client.get(), &sampleSlot, nullptr, api::kObjectPath, api::kInterface,
                                "Sample", &Announcements::onSample, &seen) >= 0);
    libsystemd::BusSlotPtr ownedSampleSlot(sampleSlot);
    sd_bus_slot* changedSlot = nullptr;
    REQUIRE(sd_bus_match_signal(client.get(), &changedSlot, nullptr, api::kObjectPath,
                                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                &Announcements::onPropertiesChanged, &seen) >= 0);
    libsystemd::BusSlotPtr ownedChangedSlot(changedSlot);
    // The matches are in place once the bus answered a call made after them.
    REQUIRE(sd_bus_call_method(client.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus.Peer", "Ping", nullptr, nullptr, "") >= 0);
    const api::Sample sample{42, 0.25, 0.5, 0.25, 0.125, 3.0, 2, false, false, false, api::kNoTemperature,
                             ""};

    // A period in which nothing changed: the Sample signal, nothing else.
    service.run([&](dbus::DaemonService& s) { s.onSample(sample); });
    // A period in which the download moved: its new value, and only that property. nicerd sends in order,
    // so had the first period announced anything, it would be here before the second Sample.
    {
        std::lock_guard lock(daemon.mutex);
        daemon.state_.downloads[0].bytesDone = 32768;
    }
    service.run([&](dbus::DaemonService& s) { s.onSample(sample); });
    REQUIRE(dispatchUntil(client.get(), [&] { return !seen.changes.empty(); }));
    CHECK_FALSE(seen.unreadable);
    CHECK(seen.samples == 2);
    REQUIRE(seen.changes.size() == 1);
    CHECK(seen.changes[0] == std::vector<std::string>{"Downloads"});
    CHECK(seen.firstDownload == "unit.bin");
    CHECK(seen.firstDownloadBytes == 32768);

    // Nothing changed again: nothing announced; then BOINC's task list changes, and only it is announced.
    service.run([&](dbus::DaemonService& s) { s.onSample(sample); });
    {
        std::lock_guard lock(daemon.mutex);
        daemon.state_.boinc.state = api::BoincState::Running;
        daemon.state_.boinc.tasks.push_back(api::BoincTask{});
        daemon.state_.boinc.tasks.back().name = "h1_0685.45";
    }
    service.run([&](dbus::DaemonService& s) { s.onSample(sample); });
    REQUIRE(dispatchUntil(client.get(), [&] { return seen.changes.size() > 1; }));
    CHECK_FALSE(seen.unreadable);
    CHECK(seen.samples == 4);
    REQUIRE(seen.changes.size() == 2);
    CHECK(seen.changes[1] == std::vector<std::string>{"BoincState", "BoincTasks"});
}

TEST_CASE("SetExclusivePrograms announces the new list and answers InvalidArgs for a bad name and Failed for "
          "a refusal",
          "[dbus][DaemonService]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = bus.connect();
    Announcements seen;
    sd_bus_slot* changedSlot = nullptr;
    REQUIRE(sd_bus_match_signal(client.get(), &changedSlot, nullptr, api::kObjectPath,
                                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                &Announcements::onPropertiesChanged, &seen) >= 0);
    libsystemd::BusSlotPtr ownedChangedSlot(changedSlot);
    const auto call = [&](std::initializer_list<const char*> names) {
        libsystemd::BusMessagePtr message;
        sd_bus_message* m = nullptr;
        REQUIRE(sd_bus_message_new_method_call(client.get(), &m, api::kBusName, api::kObjectPath,
                                               api::kInterface, "SetExclusivePrograms") >= 0);
        message.reset(m);
        REQUIRE(sd_bus_message_open_container(m, 'a', "s") >= 0);
        for (const char* name : names) {
            REQUIRE(sd_bus_message_append(m, "s", name) >= 0);
        }
        REQUIRE(sd_bus_message_close_container(m) >= 0);
        libsystemd::BusError error;
        const int r = sd_bus_call(client.get(), m, 0, error.get(), nullptr);
        return std::make_pair(r, std::string(r < 0 && error.get()->name ? error.get()->name : ""));
    };

    REQUIRE(call({"blender", "gimp"}).first >= 0);
    REQUIRE(dispatchUntil(client.get(), [&] { return !seen.changes.empty(); }));
    CHECK_FALSE(seen.unreadable);
    CHECK(seen.changes[0] == std::vector<std::string>{"ExclusivePrograms"});
    CHECK(daemon.state().exclusivePrograms == std::vector<std::string>{"blender", "gimp"});

    CHECK(call({"blender --background"}).second == "org.freedesktop.DBus.Error.InvalidArgs");
    {
        std::lock_guard lock(daemon.mutex);
        daemon.refusal = "the list was not kept: No space left on device";
    }
    CHECK(call({"steam"}).second == "org.freedesktop.DBus.Error.Failed");
    CHECK(daemon.state().exclusivePrograms == std::vector<std::string>{"blender", "gimp"});
}

TEST_CASE("the codec writes and reads every field of a struct by its field list, and a short message fails",
          "[dbus][Codec]") {
    PrivateBus bus;
    auto connection = bus.connect();
    // A message written and then read back as a receiver would (sealed, rewound).
    const auto sealed = [&](const auto& write) {
        sd_bus_message* m = nullptr;
        REQUIRE(sd_bus_message_new_signal(connection.get(), &m, api::kObjectPath, api::kInterface,
                                          "Sample") >= 0);
        libsystemd::BusMessagePtr owned(m);
        REQUIRE(write(m) >= 0);
        REQUIRE(sd_bus_message_seal(m, 1, 0) >= 0);
        REQUIRE(sd_bus_message_rewind(m, 1) >= 0);
        return owned;
    };
    api::DownloadEntry entry;
    entry.name = "a.bin";
    entry.bytesTotal = 6'000'000'000ULL;
    entry.state = api::DownloadState::Failed;
    entry.retryInSeconds = 600;
    const std::vector<api::DownloadEntry> entries = {entry, api::DownloadEntry{}};
    auto m = sealed([&](sd_bus_message* w) { return dbus::codec::appendValue(w, entries); });
    CHECK(std::string(sd_bus_message_get_signature(m.get(), 1)) ==
          api::kArraySignature<api::DownloadEntry>.data());
    std::vector<api::DownloadEntry> read;
    CHECK(dbus::codec::readValue(m.get(), read) > 0);
    CHECK(read == entries);

    const api::Sample sample{7, 0.5, 0.25, 0.25, -1.0, 0.2, 1.5, 3, true, false, 70.5, "fan"};
    m = sealed([&](sd_bus_message* w) { return dbus::codec::appendFields(w, sample); });
    CHECK(std::string(sd_bus_message_get_signature(m.get(), 1)) == api::kFieldsSignature<api::Sample>.data());
    api::Sample back;
    CHECK(dbus::codec::readFields(m.get(), back) == 0);
    CHECK(back == sample);
    // The first two fields only (an older sender's, say): not a sample.
    m = sealed([&](sd_bus_message* w) { return sd_bus_message_append(w, "td", std::uint64_t{7}, 0.5); });
    CHECK(dbus::codec::readFields(m.get(), back) == -ENXIO);
}
