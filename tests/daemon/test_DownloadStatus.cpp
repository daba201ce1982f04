#include "daemon/DownloadStatus.h"

#include <catch2/catch.hpp>

#include <chrono>

using nicer::api::isDownloadActive;
using nicer::daemon::bandwidthModeText;
using nicer::daemon::downloadStateText;
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
    CHECK(isDownloadActive("checking"));
    CHECK(isDownloadActive("queued"));
    CHECK(isDownloadActive("waiting: the server answered 503"));
    CHECK(isDownloadActive("downloading"));
    CHECK_FALSE(isDownloadActive("ok"));
    CHECK_FALSE(isDownloadActive("ok, unverified"));
    CHECK_FALSE(isDownloadActive("present"));
    CHECK_FALSE(isDownloadActive("failed: the server answered 404 Not Found; nicerd tries again in 10 min"));
    CHECK_FALSE(isDownloadActive("stopped"));
}

TEST_CASE("the bandwidth mode names nice, a cap, both, full speed, or none", "[DownloadStatus]") {
    CHECK(bandwidthModeText(false, true, 1000.0) == "none");
    CHECK(bandwidthModeText(true, true, std::nullopt) == "nice");
    CHECK(bandwidthModeText(true, true, 512000.4) == "nice, capped 512000 B/s");
    CHECK(bandwidthModeText(true, false, 10485760.0) == "capped 10485760 B/s");
    CHECK(bandwidthModeText(true, false, std::nullopt) == "full");
}
