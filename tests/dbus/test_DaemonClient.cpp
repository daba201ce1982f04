#include "DbusTestSupport.h"
#include "api/BusNames.h"
#include "control/ParameterTable.h"
#include "dbus/client/DaemonClient.h"

#include <catch2/catch.hpp>

using namespace nicer;
using namespace std::chrono_literals;
using api::DownloadState;
using dbus::DaemonClient;
using dbus::test::FakeDaemon;
using dbus::test::PrivateBus;
using dbus::test::ServedService;

namespace {

std::vector<api::DownloadEntry> everyState() {
    std::vector<api::DownloadEntry> entries;
    for (std::size_t i = 0; i < api::kDownloadStateKeywords.size(); ++i) {
        api::DownloadEntry e;
        e.name = "unit-" + std::to_string(i) + ".bin";
        e.bytesDone = 1000 * i;
        e.bytesTotal = 10'000;
        e.rate = 12.5 * static_cast<double>(i);
        e.state = static_cast<DownloadState>(i);
        e.verified = e.state == DownloadState::Ok || e.state == DownloadState::Present;
        if (e.state == DownloadState::Waiting || e.state == DownloadState::Failed) {
            // A reason that reads like another state or a cap: it is a field, nothing parses it.
            e.reason = "failed: capped 5 B/s; ok";
        }
        if (e.state == DownloadState::Failed) {
            e.retryInSeconds = 0; // "now" is a retry time too, distinct from none
        }
        entries.push_back(e);
    }
    return entries;
}

} // namespace

TEST_CASE("status reads every property nicerd publishes: the whole state comes back as it was sent",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    // Every field away from its default, so that one the table leaves out would not come back.
    auto& st = daemon.state_;
    st.params.reserveBand = 0.125;
    st.params.maxMultiplier = 8;
    st.params.overloadThreshold = 7;
    st.params.period = 250ms;
    st.paused = true;
    st.downloads = everyState();
    st.bandwidthMode = "nice";
    st.bandwidthCap = 524288;
    st.boinc.state = api::BoincState::Running;
    st.boinc.detail = "detail";
    st.boinc.systemService = "boinc-client.service is enabled";
    st.boinc.overrideApplied = true;
    st.boinc.maxDownRate = 1000;
    st.boinc.maxUpRate = 500;
    st.boinc.projects = {{"https://p.example/", "P", 1, 2, 3, true, false, true}};
    st.boinc.tasks = {
        {"t1", "https://p.example/", api::BoincTaskState::Running, 0.5, 60, 120, 1'700'000'000}};
    st.boinc.transfers = {{"f1", "https://p.example/", true, 100, 50, 10, api::BoincTransferState::Active}};
    st.boinc.notices = {{7, 1'700'000'000, "P", "title", "text", true}};
    st.params.temperatureTarget = 72.0;
    st.params.batteryCap = 0.25;
    st.params.gamesPause = 0;
    st.heldBy = "temperature";
    st.holdReason = "held to 40%: CPU 82 °C, target 80 °C";
    st.temperature = 82.0;
    st.temperatureTargetInUse = 80.0;
    st.temperatureSensor = "coretemp Package id 0 (/sys/class/hwmon/hwmon3/temp1_input)";
    st.sensorNote = "note";
    st.fanSpeed = 3100.0;
    st.onBattery = true;
    st.batteryPercent = 54.0;
    st.powerSaver = true;
    st.powerSource = "UPower";
    st.powerNote = "power note";
    st.games = 2;
    st.gameNote = "game note";
    st.exclusivePrograms = {"blender", "gimp"};
    st.programsRunning = {"gimp"};
    const api::DaemonState sent = st;
    REQUIRE_FALSE(sent == api::DaemonState{});
    ServedService service(bus, daemon);

    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    const auto s = client->status();
    REQUIRE(s.ok());
    CHECK(s->params == sent.params);
    CHECK(s->apiVersion == api::kApiVersion);
    CHECK(s->workloadPresets == sent.workloadPresets);
    CHECK(s->downloads == sent.downloads);
    CHECK(s->boinc == sent.boinc);
    CHECK(api::bandwidthOf(*s) == api::BandwidthMode{api::BandwidthMode::Kind::Nice, std::uint64_t{524288}});
    CHECK(*s == sent);
}

TEST_CASE("a bandwidth mode without a cap and no downloads read back as such", "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    daemon.state_.bandwidthMode = "full";
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    const auto s = client->status();
    REQUIRE(s.ok());
    CHECK(s->downloads.empty());
    CHECK(api::bandwidthOf(*s) == api::BandwidthMode{api::BandwidthMode::Kind::Full, std::nullopt});
}

TEST_CASE("setParameters sends every parameter of the table, and nicerd gets them exactly",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());

    control::ControllerParams p;
    p.reserveBand = 0.0625;
    p.minMultiplier = 2;
    p.maxMultiplier = 32.5;
    p.overloadThreshold = 9;
    p.idleEpsilon = 0.01;
    p.period = 10s;
    REQUIRE(client->setParameters(p).ok());
    {
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.state_.params == p);
    }
    // Values nicerd refuses come back as the error, in plain words, and change nothing.
    control::ControllerParams bad = p;
    bad.maxMultiplier = 99;
    const auto refused = client->setParameters(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("max-multiplier = 99 is out of range"));
    std::lock_guard lock(daemon.mutex);
    CHECK(daemon.state_.params == p);
}

TEST_CASE("history, pause, resume and the workload preset round-trip", "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());

    const auto history = client->history();
    REQUIRE(history.ok());
    REQUIRE(history->size() == 2);
    CHECK((*history)[1].timeUSec == 2);
    CHECK((*history)[1].foreground == 0.6);
    CHECK((*history)[1].multiplier == 4.0);
    CHECK((*history)[1].overloadCount == 2);
    CHECK((*history)[1].paused);
    CHECK_FALSE((*history)[0].paused);
    // ApiVersion 8: the outside share (-1: unknown) and the signal answered travel with every sample.
    CHECK((*history)[0].outside == -1.0);
    CHECK_FALSE((*history)[0].outsideSignal);
    CHECK((*history)[1].outside == 0.25);
    CHECK((*history)[1].quota == 0.3);
    CHECK((*history)[1].outsideSignal);
    // ApiVersion 10: the CPU's temperature and the rule that held the work.
    CHECK((*history)[0].temperature == api::kNoTemperature);
    CHECK((*history)[0].heldBy.empty());
    CHECK((*history)[1].temperature == 71.5);
    CHECK((*history)[1].heldBy == "temperature");

    REQUIRE(client->pause().ok());
    {
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.state_.paused);
    }
    REQUIRE(client->resume().ok());
    {
        std::lock_guard lock(daemon.mutex);
        CHECK_FALSE(daemon.state_.paused);
    }
    REQUIRE(client->setWorkloadPreset("demo").ok());
    {
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.lastPreset == "demo");
        daemon.refusal = "the BOINC client is not installed: sudo apt install boinc-client";
    }
    const auto refused = client->setWorkloadPreset("boinc");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("sudo apt install boinc-client"));
    CHECK(refused.error().kind == ErrorKind::Failed);
    // The failure's kind crosses the bus as the error's name (DaemonService) and back (DaemonClient).
    for (const auto kind : {ErrorKind::InvalidInput, ErrorKind::Unavailable}) {
        {
            std::lock_guard lock(daemon.mutex);
            daemon.refusalKind = kind;
        }
        const auto again = client->setWorkloadPreset("boinc");
        REQUIRE_FALSE(again.ok());
        CHECK(again.error().kind == kind);
    }
    {
        std::lock_guard lock(daemon.mutex);
        daemon.refusalKind = ErrorKind::Failed;
    }
    const auto notPaused = client->pause();
    REQUIRE_FALSE(notPaused.ok());
    CHECK_THAT(notPaused.error().message, Catch::Contains("not installed"));
}

TEST_CASE("the client sets the named programs and hears nicerd refuse a bad name with its reason",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    REQUIRE(client->setExclusivePrograms({"blender", "steam"}).ok());
    CHECK(client->status()->exclusivePrograms == std::vector<std::string>{"blender", "steam"});
    REQUIRE(client->setExclusivePrograms({}).ok());
    CHECK(client->status()->exclusivePrograms.empty());

    const auto path = client->setExclusivePrograms({"gimp", "/usr/bin/blender"});
    REQUIRE_FALSE(path.ok());
    CHECK_THAT(path.error().message, Catch::Contains("'/usr/bin/blender' is a path"));
    CHECK(client->status()->exclusivePrograms.empty());
}

TEST_CASE("without nicerd on the bus the client says it is not running and how to start it",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    const auto status = client->status();
    REQUIRE_FALSE(status.ok());
    CHECK_THAT(status.error().message, Catch::Contains("nicerd is not running"));
    const auto paused = client->pause();
    REQUIRE_FALSE(paused.ok());
    CHECK_THAT(paused.error().message, Catch::Contains("systemctl --user start nicerd"));
}

namespace {

/// A nicerd of another version: Downloads of another signature (a(sttds), the state as a sentence).
int oldProperty(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply, void*,
                sd_bus_error*) {
    if (std::string_view(property) == "ReserveBand") {
        return sd_bus_message_append(reply, "d", 0.25);
    }
    return sd_bus_message_append(reply, "a(sttds)", 1, "a.bin", std::uint64_t{1}, std::uint64_t{2}, 0.0,
                                 "failed: the server answered 404 Not Found");
}

const sd_bus_vtable kOldVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ReserveBand", "d", oldProperty, 0, 0),
    SD_BUS_PROPERTY("Downloads", "a(sttds)", oldProperty, 0, 0),
    SD_BUS_VTABLE_END,
};

} // namespace

TEST_CASE("a property of another signature than the table's is left out, not an error",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    auto old = bus.connect();
    sd_bus_slot* slot = nullptr;
    REQUIRE(sd_bus_add_object_vtable(old.get(), &slot, api::kObjectPath, api::kInterface, kOldVtable,
                                     nullptr) >= 0);
    libsystemd::BusSlotPtr ownedSlot(slot);
    REQUIRE(sd_bus_request_name(old.get(), api::kBusName, 0) >= 0);
    std::atomic<bool> stop{false};
    std::thread serve([&] {
        while (!stop) {
            while (sd_bus_process(old.get(), nullptr) > 0) {
            }
            sd_bus_wait(old.get(), 20'000);
        }
    });
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    const auto s = client->status();
    stop = true;
    serve.join();
    REQUIRE(s.ok());
    CHECK(s->params.reserveBand == 0.25);
    CHECK(s->downloads.empty());
}

TEST_CASE("the BOINC client's state and lists read back field by field", "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    daemon.state_.boinc.state = api::BoincState::Suspended;
    daemon.state_.boinc.detail = "suspended by you";
    daemon.state_.boinc.systemService =
        "the system-wide BOINC service is enabled: sudo systemctl disable --now ...";
    daemon.state_.boinc.overrideApplied = true;
    daemon.state_.boinc.maxDownRate = 250'000.5;
    daemon.state_.boinc.maxUpRate = 0;
    daemon.state_.boinc.projects = {{"http://a.example/p/", "Project A", 1.5, 2.5, 3.5, true, false, true},
                                    {"https://b.example/", "", 0, 0, 0, false, true, false}};
    daemon.state_.boinc.tasks = {
        {"wu_1_0", "http://a.example/p/", api::BoincTaskState::Running, 0.25, 60.5, 180.0, 1'800'000'000},
        {"wu_2_0", "https://b.example/", api::BoincTaskState::ReadyToReport, 1.0, 300, 0, 0}};
    daemon.state_.boinc.transfers = {
        {"wu_1.in", "http://a.example/p/", false, 1e6, 2.5e5, 5e4, api::BoincTransferState::Active},
        {"wu_1_0_r1.out", "http://a.example/p/", true, 100, 0, 0, api::BoincTransferState::Waiting}};
    daemon.state_.boinc.notices = {
        {7, 1'700'000'000, "Project A", "News", "Plain text, with <no> markup", false},
        {9, 1'700'000'100, "", "", "Syntax error in app_info.xml", true}};
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());
    const auto s = client->status();
    REQUIRE(s.ok());
    CHECK(s->boinc == daemon.state_.boinc);
}

TEST_CASE("attach, account manager and detach reach the daemon, and its refusal comes back",
          "[dbus][DaemonClient]") {
    PrivateBus bus;
    FakeDaemon daemon;
    ServedService service(bus, daemon);
    auto client = DaemonClient::connect();
    REQUIRE(client.ok());

    // Without a BOINC client under nicerd, nothing is asked of it.
    const auto off = client->boincAttach("http://a.example/", "key");
    REQUIRE_FALSE(off.ok());
    CHECK_THAT(off.error().message, Catch::Contains("no BOINC client runs under nicerd") &&
                                        Catch::Contains("nicer workload boinc"));
    {
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.boincRequests.empty());
        daemon.state_.boinc.state = api::BoincState::Running;
    }
    REQUIRE(client->boincAttach("http://a.example/", "key 1").ok());
    REQUIRE(client->boincAttachAccountManager("https://bam.example/", "me", "secret").ok());
    REQUIRE(client->boincDetach("http://a.example/").ok());
    {
        std::lock_guard lock(daemon.mutex);
        CHECK(daemon.boincRequests == std::vector<std::string>{"attach http://a.example/ key 1",
                                                               "manager https://bam.example/ me secret",
                                                               "detach http://a.example/"});
        daemon.boincRefusal = "BOINC: Invalid URL";
    }
    const auto refused = client->boincDetach("http://nowhere.example/");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("BOINC: Invalid URL"));
}
