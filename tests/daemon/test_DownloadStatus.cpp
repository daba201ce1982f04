#include "api/DownloadText.h"
#include "daemon/DownloadStatus.h"

#include <catch2/catch.hpp>

#include <chrono>

using nicer::api::BandwidthMode;
using nicer::api::DownloadState;
using nicer::api::isDownloadActive;
using nicer::daemon::bandwidthMode;
using nicer::daemon::downloadEntry;
using nicer::net::FetchFileReport;
using nicer::net::FileState;
using namespace std::chrono_literals;

namespace {

FetchFileReport file(FileState state, std::string error = {}, bool verified = true) {
    FetchFileReport f;
    f.name = "unit.bin";
    f.state = state;
    f.error = std::move(error);
    f.verified = verified;
    return f;
}

/// The text `nicer status` shows for a file, from the entry's fields.
std::string downloadStateText(const FetchFileReport& f, std::optional<std::chrono::seconds> retryIn = {}) {
    return nicer::api::downloadStateText(downloadEntry(f, retryIn));
}

std::string bandwidthModeText(bool hasDownloads, bool nice, std::optional<double> maxRate) {
    return nicer::api::bandwidthModeText(bandwidthMode(hasDownloads, nice, maxRate));
}

} // namespace

TEST_CASE("every fetch state maps to a state text that starts with its keyword", "[DownloadStatus]") {
    CHECK(downloadStateText(file(FileState::Checking)) == "checking");
    CHECK(downloadStateText(file(FileState::Queued)) == "queued");
    CHECK(downloadStateText(file(FileState::Waiting)) == "waiting");
    CHECK(downloadStateText(file(FileState::Waiting, "the server answered 503 Service Unavailable")) ==
          "waiting: the server answered 503 Service Unavailable");
    CHECK(downloadStateText(file(FileState::Active)) == "downloading");
    CHECK(downloadStateText(file(FileState::Ok)) == "ok");
    CHECK(downloadStateText(file(FileState::Ok, {}, false)) == "ok, unverified");
    CHECK(downloadStateText(file(FileState::AlreadyPresent)) == "present");
    CHECK(downloadStateText(file(FileState::Failed, "the server answered 404 Not Found")) ==
          "failed: the server answered 404 Not Found");
    CHECK(downloadStateText(file(FileState::Failed)) == "failed: no reason given");
    CHECK(downloadStateText(file(FileState::Cancelled)) == "stopped");
}

TEST_CASE("a failed file says when nicerd tries it again, rounded up", "[DownloadStatus]") {
    const auto failed = file(FileState::Failed, "the server answered 404 Not Found");
    CHECK(downloadStateText(failed, 600s) ==
          "failed: the server answered 404 Not Found; nicerd tries again in 10 min");
    CHECK(downloadStateText(failed, 61s).ends_with("in 2 min"));
    CHECK(downloadStateText(failed, 59s).ends_with("in 59 s"));
    CHECK(downloadStateText(failed, 0s).ends_with("in 0 s"));
    // Only failed files wait for a retry.
    CHECK(downloadStateText(file(FileState::Ok), 600s) == "ok");
}

TEST_CASE("queued, waiting and downloading are the states that change by themselves", "[DownloadStatus]") {
    CHECK(isDownloadActive(DownloadState::Checking));
    CHECK(isDownloadActive(DownloadState::Queued));
    CHECK(isDownloadActive(DownloadState::Waiting));
    CHECK(isDownloadActive(DownloadState::Downloading));
    CHECK_FALSE(isDownloadActive(DownloadState::Ok));
    CHECK_FALSE(isDownloadActive(DownloadState::Present));
    CHECK_FALSE(isDownloadActive(DownloadState::Failed));
    CHECK_FALSE(isDownloadActive(DownloadState::Stopped));
}

TEST_CASE("the state travels as fields: state, verified, reason and the retry time", "[DownloadStatus]") {
    const auto waiting = downloadEntry(file(FileState::Waiting, "the server answered 503"));
    CHECK(waiting.state == DownloadState::Waiting);
    CHECK(waiting.reason == "the server answered 503");
    CHECK_FALSE(waiting.retryInSeconds);
    const auto failed = downloadEntry(file(FileState::Failed, "the server answered 404 Not Found"), 600s);
    CHECK(failed.state == DownloadState::Failed);
    CHECK(failed.reason == "the server answered 404 Not Found");
    CHECK(failed.retryInSeconds == 600);
    CHECK(downloadEntry(file(FileState::Failed)).reason == "no reason given");
    CHECK_FALSE(downloadEntry(file(FileState::Ok), 600s).retryInSeconds);
    CHECK(downloadEntry(file(FileState::Ok)).verified);
    CHECK_FALSE(downloadEntry(file(FileState::Ok, {}, false)).verified);
    CHECK(downloadEntry(file(FileState::AlreadyPresent)).state == DownloadState::Present);
    CHECK(downloadEntry(file(FileState::Cancelled)).state == DownloadState::Stopped);
    for (std::size_t i = 0; i < nicer::api::kDownloadStateKeywords.size(); ++i) {
        const auto state = static_cast<DownloadState>(i);
        CHECK(nicer::api::busKeywordValue<nicer::api::DownloadState>(nicer::api::busKeyword(state)) == state);
    }
    CHECK_FALSE(nicer::api::busKeywordValue<nicer::api::DownloadState>("failed: x"));
}

TEST_CASE("the bandwidth mode names nice, a cap, both, full speed, or none", "[DownloadStatus]") {
    CHECK(bandwidthModeText(false, true, 1000.0) == "none");
    CHECK(bandwidthModeText(true, true, std::nullopt) == "nice");
    CHECK(bandwidthModeText(true, true, 512000.4) == "nice, capped 512000 B/s");
    CHECK(bandwidthModeText(true, false, 10485760.0) == "capped 10485760 B/s");
    CHECK(bandwidthModeText(true, false, std::nullopt) == "full");
    CHECK(bandwidthMode(true, true, 512000.4) ==
          BandwidthMode{BandwidthMode::Kind::Nice, std::uint64_t{512000}});
    CHECK(bandwidthMode(true, false, 1024.0) ==
          BandwidthMode{BandwidthMode::Kind::Capped, std::uint64_t{1024}});
    CHECK(bandwidthMode(true, false, std::nullopt) == BandwidthMode{BandwidthMode::Kind::Full, std::nullopt});
    CHECK(bandwidthMode(false, true, 1000.0) == BandwidthMode{});
}
