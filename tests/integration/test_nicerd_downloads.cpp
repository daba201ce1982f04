// nicerd downloading work units from the REAL HTTP/2 servers of the h2_servers fixture (nghttpd, TLS with
// the test CA and h2c) while it runs the work under a real systemd user manager: the files arrive verified,
// D-Bus and `nicer status` show them, failures are retried later, a stop keeps part files, a bad manifest
// stops the start, and the schedule's hours (in a local time zone of the test's choosing) stop the work and
// the downloads at an hour's edge and start them at the next.
#include "H2Manifest.h"
#include "LocalTimeZone.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "api/DownloadText.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"
#include "net/H2Servers.h"
#include "net/fetch/Sha256.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;
using test::freshStateDir;
using test::NicerdProcess;

namespace {

// A bound on waiting for nicerd, never a performance claim.
constexpr auto kWait = 60s;

/// The state as `nicer status` words it: since ApiVersion 2 the bus carries it as fields.
std::string stateText(const api::DownloadEntry& e) {
    return api::downloadStateText(e);
}

std::string describe(const std::vector<api::DownloadEntry>& downloads) {
    std::ostringstream text;
    for (const auto& e : downloads) {
        text << "  " << e.name << ": " << e.bytesDone << "/" << e.bytesTotal << " B, " << e.rate << " B/s, "
             << stateText(e) << '\n';
    }
    return text.str();
}

/// Polls nicerd's status until @p done holds for it (returned) or kWait passes (the last status, which
/// the caller's checks then show).
api::DaemonState waitForDownloads(NicerdProcess& daemon,
                                  const std::function<bool(const api::DaemonState&)>& done) {
    api::DaemonState last;
    bool there = false;
    test::pollUntil(
        [&] {
            if (auto s = test::tryDaemonStatus()) {
                last = *s;
                there = done(last);
            }
            return there || daemon.exited();
        },
        kWait, 200ms);
    if (there) {
        return last;
    }
    INFO("nicerd's log:\n" << daemon.log());
    INFO("downloads:\n" << describe(last.downloads));
    FAIL("the downloads did not get there in time");
    return last;
}

const api::DownloadEntry& entry(const api::DaemonState& s, const std::string& name) {
    for (const auto& e : s.downloads) {
        if (e.name == name) {
            return e;
        }
    }
    FAIL("no download " << name << " in\n" << describe(s.downloads));
    throw std::logic_error("unreachable");
}

bool allInPlace(const api::DaemonState& s) {
    return !s.downloads.empty() && std::all_of(s.downloads.begin(), s.downloads.end(), [](const auto& e) {
        return stateText(e).starts_with("ok") || stateText(e).starts_with("present");
    });
}

std::string sha256Of(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    INFO(path.string());
    REQUIRE(in);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    net::Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    return hash.hexDigest();
}

std::vector<std::string> nicerdArgs(std::vector<std::string> extra) {
    std::vector<std::string> args{"--period", "0.25", "--instances", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

} // namespace

TEST_CASE("nicerd downloads its manifests into the download directory, verified, and shows them",
          "[nicerd][downloads]") {
    const auto servers = test::H2Servers::load();
    const auto dir = freshStateDir("fetch");
    const auto downloads = dir / "work-units";
    const auto tls = test::nghttpdTlsBase(servers);
    const std::vector<test::ManifestEntry> files{
        test::servedFile(servers, "1k.bin", tls), test::servedFile(servers, "64k.bin", tls),
        test::servedFile(servers, "1m.bin", tls),
        test::servedFile(servers, "dir/nested.txt", test::nghttpdH2cBase(servers))};
    test::writeMetalink(dir / "units.meta4", files);
    const std::string plainUrl = test::nghttpdH2cBase(servers) + "hello.txt";

    NicerdProcess daemon(
        nicerdArgs({"--manifest", (dir / "units.meta4").string(), "--manifest", plainUrl, "--download-dir",
                    downloads.string(), "--ca-file", servers.caFile.string()}),
        dir);
    REQUIRE(daemon.waitReady());
    const auto s = waitForDownloads(daemon, allInPlace);
    INFO(describe(s.downloads));
    REQUIRE(s.downloads.size() == 5);
    for (const auto& f : files) {
        const auto& e = entry(s, f.name);
        CHECK(stateText(e) == "ok");
        CHECK(e.bytesDone == f.size);
        CHECK(e.bytesTotal == f.size);
        CHECK(e.rate == 0.0); // done: nothing moves any more
        CHECK(sha256Of(downloads / f.name) == f.sha256);
    }
    // A plain URL has no hash to check: it is in place, and says it is unverified.
    CHECK(stateText(entry(s, "hello.txt")) == "ok, unverified");
    CHECK(sha256Of(downloads / "hello.txt") == test::readSha256Sums(servers.www).at("hello.txt"));
    CHECK(api::bandwidthModeText(api::bandwidthOf(s)) == "nice"); // the daemon yields the link by default
    CHECK(s.downloadRate == 0.0);
    CHECK(s.lastError.empty());
    CHECK_FALSE(std::filesystem::exists(downloads / "1m.bin.part"));

    const auto text = test::runCommand(std::string(NICER_CLI) + " status");
    CHECK(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("downloads    5 of 5 files in place"));
    CHECK_THAT(text.out, Catch::Contains("(bandwidth: nice)"));
    const auto json = test::runCommand(std::string(NICER_CLI) + " status --json");
    CHECK(json.exitCode == 0);
    CHECK_THAT(json.out, Catch::Contains("\"bandwidth_mode\": \"nice\""));
    CHECK_THAT(json.out, Catch::Contains("\"name\": \"dir/nested.txt\""));
    CHECK(daemon.stop() == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a capped download shows its rate, and after a stop the next start finishes the part file",
          "[nicerd][downloads]") {
    const auto servers = test::H2Servers::load();
    const auto dir = freshStateDir("capped");
    const auto downloads = dir / "units";
    const auto big = test::servedFile(servers, "16m.bin", test::nghttpdH2cBase(servers));
    test::writeMetalink(dir / "big.meta4", {big});
    {
        NicerdProcess daemon(nicerdArgs({"--manifest", (dir / "big.meta4").string(), "--download-dir",
                                         downloads.string(), "--max-rate", "512k", "--no-nice"}),
                             dir);
        REQUIRE(daemon.waitReady());
        // Two seconds into the download, the per-file rate and the total are both measured.
        const auto s = waitForDownloads(daemon, [](const api::DaemonState& st) {
            return !st.downloads.empty() && stateText(st.downloads[0]) == "downloading" &&
                   st.downloads[0].bytesDone > 1024 * 1024 && st.downloads[0].rate > 0;
        });
        INFO(describe(s.downloads));
        CHECK(api::bandwidthModeText(api::bandwidthOf(s)) == "capped 524288 B/s");
        CHECK(s.downloads[0].bytesTotal == big.size);
        // Loose bounds: a cap must hold it far under loopback speed, and a measured rate is never zero.
        CHECK(s.downloads[0].rate < 2 * 524288.0);
        CHECK(s.downloadRate > 0);
        CHECK(s.downloadRate < 2 * 524288.0);
        CHECK(daemon.stop() == 0);
    }
    REQUIRE(std::filesystem::exists(downloads / "16m.bin.part"));
    CHECK(std::filesystem::file_size(downloads / "16m.bin.part") > 1024 * 1024);
    CHECK_FALSE(std::filesystem::exists(downloads / "16m.bin"));

    NicerdProcess again(nicerdArgs({"--manifest", (dir / "big.meta4").string(), "--download-dir",
                                    downloads.string(), "--no-nice"}),
                        dir);
    REQUIRE(again.waitReady());
    const auto s = waitForDownloads(again, allInPlace);
    CHECK(api::bandwidthModeText(api::bandwidthOf(s)) == "full");
    CHECK(stateText(s.downloads[0]) == "ok");
    CHECK(sha256Of(downloads / "16m.bin") == big.sha256);
    CHECK(again.stop() == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("files that fail are tried again after the retry delay, and only they", "[nicerd][downloads]") {
    const auto servers = test::H2Servers::load();
    const auto dir = freshStateDir("retry");
    const auto downloads = dir / "units";
    const std::string lateName = "nicer-late-" + std::to_string(::getpid()) + ".txt";
    const std::string lateContent = "a work unit the server publishes late\n";
    const auto late = servers.www / lateName;
    std::filesystem::remove(late);
    net::Sha256 hash;
    hash.update(lateContent.data(), lateContent.size());
    const auto h2c = test::nghttpdH2cBase(servers);
    test::writeMetalink(dir / "units.meta4",
                        {test::servedFile(servers, "64k.bin", h2c),
                         {lateName, lateContent.size(), hash.hexDigest(), h2c + lateName}});

    NicerdProcess daemon(nicerdArgs({"--manifest", (dir / "units.meta4").string(), "--download-dir",
                                     downloads.string(), "--download-retry", "3"}),
                         dir);
    REQUIRE(daemon.waitReady());
    // The retry is armed once the round is over, that is once 64k.bin is in place too (in nice mode, the
    // default, that can take a second or two: the download starts at the nice mode's floor rate).
    const auto failed = waitForDownloads(daemon, [&](const api::DaemonState& s) {
        return s.downloads.size() == 2 && stateText(entry(s, lateName)).starts_with("failed: ") &&
               stateText(entry(s, lateName)).find("nicerd tries again in") != std::string::npos;
    });
    INFO(describe(failed.downloads));
    CHECK_THAT(stateText(entry(failed, lateName)), Catch::Contains("404"));
    CHECK_THAT(stateText(entry(failed, lateName)), Catch::Contains("nicerd tries again in"));
    CHECK(stateText(entry(failed, "64k.bin")) == "ok");

    {
        std::ofstream out(late);
        out << lateContent;
    }
    const auto s = waitForDownloads(daemon, allInPlace);
    std::filesystem::remove(late);
    CHECK(stateText(entry(s, lateName)) == "ok");
    // The file that was in place stays as it was: it is not fetched or even hashed again.
    CHECK(stateText(entry(s, "64k.bin")) == "ok");
    std::ifstream in(downloads / lateName);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(content == lateContent);
    CHECK(daemon.stop() == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a bad manifest stops nicerd's start with the file named", "[nicerd][downloads][config]") {
    const auto dir = freshStateDir("bad-manifest");
    const std::string truncated = NICER_TEST_DATA "/metalink/truncated.meta4";
    struct Case {
        std::string args;
        std::string expected;
    };
    const auto c = GENERATE_COPY(
        Case{"--manifest /nonexistent/units.meta4", "/nonexistent/units.meta4"},
        Case{"--manifest " + truncated, truncated},
        Case{"--manifest https://example.org/units.meta4", "nicerd reads Metalink manifests from files"},
        Case{"--manifest http://example.org/x.bin --max-rate fast", "max-rate = 'fast'"});
    CAPTURE(c.args);
    // A config directory of its own, so that no nicerd.conf of the machine's user takes part.
    const auto r = test::runCommand("XDG_CONFIG_HOME=" + dir.string() + " XDG_STATE_HOME=" + dir.string() +
                                    " " + NICERD + " " + c.args);
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expected));
    CHECK(r.err.find("running") == std::string::npos);

    // The same from the config file.
    std::ofstream(dir / "nicerd.conf") << "manifest = /nonexistent/from-config.meta4\n";
    const auto fromConfig =
        test::runCommand(std::string(NICERD) + " --config " + (dir / "nicerd.conf").string());
    CHECK(fromConfig.exitCode == 2);
    CHECK_THAT(fromConfig.err, Catch::Contains("/nonexistent/from-config.meta4"));
    std::filesystem::remove_all(dir);
}

TEST_CASE(
    "the work and its downloads stop at the schedule's edge and go on at the next (nicerd's local time)",
    "[nicerd][downloads][schedule]") {
    const auto servers = test::H2Servers::load();
    const auto dir = freshStateDir("schedule");
    const auto downloads = dir / "units";
    const auto big = test::servedFile(servers, "16m.bin", test::nghttpdH2cBase(servers));
    test::writeMetalink(dir / "big.meta4", {big});
    // Every hour but 18:00-18:01, for the work and the transfers; nicerd's local time is a few seconds
    // before.
    const test::LocalTimeZone zone(17, 59, 55);
    NicerdProcess daemon(nicerdArgs({"--manifest", (dir / "big.meta4").string(), "--download-dir",
                                     downloads.string(), "--max-rate", "128k", "--no-nice", "--compute-hours",
                                     "18:01-18:00", "--transfer-hours", "18:01-18:00"}),
                         dir, {{"TZ", zone.tz()}});
    REQUIRE(daemon.waitReady());
    // Before the edge: the work runs and the file comes.
    auto s = waitForDownloads(daemon, [](const api::DaemonState& st) {
        return !st.downloads.empty() && st.downloads[0].bytesDone > 0 && st.quota > 0.0;
    });
    CHECK(s.params.computeHours.text() == "18:01-18:00");
    CHECK(std::chrono::system_clock::now() < zone.at(18, 0, 0));
    // At 18:00 both stop: the work paused by the schedule, the download waiting with the reason.
    s = waitForDownloads(daemon, [](const api::DaemonState& st) {
        return st.heldBy == "schedule" && !st.downloads.empty() &&
               stateText(st.downloads[0]).starts_with("waiting");
    });
    CHECK(s.quota == 0.0);
    CHECK(s.holdReason == "paused: outside your computing hours (18:01-18:00), which begin in 1 min");
    CHECK(stateText(s.downloads[0]) ==
          "waiting: outside your transfer hours (18:01-18:00), which begin in 1 min");
    REQUIRE(std::filesystem::exists(downloads / "16m.bin.part"));
    const auto partSize = std::filesystem::file_size(downloads / "16m.bin.part");
    // While held nothing moves; at 18:01 both go on (the minute is the schedule's grain: the wait is longer).
    auto client = dbus::DaemonClient::connect();
    REQUIRE(client);
    const auto heldSamples = [&] {
        const auto history = client->history();
        return history ? std::count_if(history->begin(), history->end(),
                                       [](const api::Sample& sample) { return sample.heldBy == "schedule"; })
                       : 0;
    };
    const auto heldAtStart = heldSamples();
    REQUIRE(test::pollUntil([&] { return heldSamples() >= heldAtStart + 8; }, 30s)); // 2 s of held periods
    CHECK(std::filesystem::file_size(downloads / "16m.bin.part") == partSize);
    REQUIRE(test::pollUntil(
        [] {
            const auto st = test::tryDaemonStatus();
            return st && st->heldBy.empty() && st->quota > 0.0 && !st->downloads.empty() &&
                   stateText(st->downloads[0]) == "downloading";
        },
        90s, 200ms));
    CHECK(std::chrono::system_clock::now() >= zone.at(18, 1, 0));
    s = waitForDownloads(daemon, [&](const api::DaemonState& st) {
        return !st.downloads.empty() && std::filesystem::file_size(downloads / "16m.bin.part") > partSize;
    });
    // The samples put the hold at the edges, to within a period and the zone's second.
    const auto history = client->history();
    REQUIRE(history);
    const auto usec = [](std::chrono::system_clock::time_point t) {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
    };
    const std::uint64_t edge = usec(zone.at(18, 0, 0));
    const std::uint64_t next = usec(zone.at(18, 1, 0));
    const std::uint64_t slack = 1'300'000; // a period, and the zone's whole seconds
    int held = 0;
    for (const auto& sample : *history) {
        INFO(sample.timeUSec << " held by '" << sample.heldBy << "'");
        if (sample.timeUSec + slack < edge || sample.timeUSec > next + slack) {
            CHECK(sample.heldBy != "schedule");
        }
        if (sample.timeUSec > edge + slack && sample.timeUSec + slack < next) {
            CHECK(sample.heldBy == "schedule");
            CHECK(sample.quota == 0.0);
            ++held;
        }
    }
    CHECK(held > 200); // the minute, in 0.25 s periods
    CHECK_THAT(daemon.log(),
               Catch::Contains("outside the transfer hours (18:01-18:00): the downloads wait") &&
                   Catch::Contains("the transfer hours (18:01-18:00) begin: the downloads go on"));
    CHECK(daemon.stop() == 0);
    std::filesystem::remove_all(dir);
}
