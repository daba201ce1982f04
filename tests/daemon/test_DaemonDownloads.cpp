// nicerd's downloads on a real sd-event loop, without any server: a plan checked before anything starts,
// files an earlier run left in place, and a mirror that refuses (a closed port on loopback). The downloads
// from real HTTP/2 servers are tested in tests/integration/test_nicerd_downloads.cpp.
#include "EventLoop.h"
#include "FreePort.h"
#include "daemon/DaemonDownloads.h"
#include "libsystemd/Event.h"
#include "net/fetch/Sha256.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;
using api::DownloadState;

namespace {

std::filesystem::path freshDir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("nicer-downloads-test-" + std::to_string(::getpid())) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

net::MetalinkFile file(const std::string& name, const std::string& content, int port) {
    net::Sha256 hash;
    hash.update(content.data(), content.size());
    net::MetalinkFile f;
    f.name = name;
    f.size = content.size();
    f.sha256 = hash.hexDigest();
    f.mirrors.push_back({"http://127.0.0.1:" + std::to_string(port) + "/" + name});
    return f;
}

} // namespace

TEST_CASE("a plan with a name that leaves the directory is refused before anything starts", "[downloads]") {
    const auto dir = freshDir("bad-name");
    const auto event = test::newLoop();
    daemon::DownloadSettings settings;
    settings.dir = dir / "out";
    settings.files = {file("../escape.bin", "x", nicer::test::freeLoopbackPort())};
    const auto downloads = daemon::DaemonDownloads::create(event.get(), settings);
    REQUIRE_FALSE(downloads.ok());
    CHECK_THAT(downloads.error().message, Catch::Contains("../escape.bin"));
    CHECK_FALSE(std::filesystem::exists(dir / "escape.bin"));
}

TEST_CASE("files an earlier run left in place are verified and shown present, without any network",
          "[downloads]") {
    const auto dir = freshDir("present");
    const std::string content(100'000, 'p');
    std::filesystem::create_directories(dir / "out");
    std::ofstream(dir / "out" / "a.bin", std::ios::binary) << content;
    const auto event = test::newLoop();
    daemon::DownloadSettings settings;
    settings.dir = dir / "out";
    settings.files = {file("a.bin", content, nicer::test::freeLoopbackPort())};
    auto downloads = daemon::DaemonDownloads::create(event.get(), settings);
    REQUIRE(downloads.ok());
    (*downloads)->start();
    CHECK(test::runLoopUntil(
        event.get(), [&] { return (*downloads)->complete(); }, 20s));

    const auto entries = (*downloads)->entries();
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].name == "a.bin");
    CHECK(entries[0].state == DownloadState::Present);
    CHECK(entries[0].verified);
    CHECK(entries[0].bytesDone == content.size());
    CHECK(entries[0].bytesTotal == content.size());
    CHECK((*downloads)->bandwidthMode().kind == api::BandwidthMode::Kind::Nice);
}

TEST_CASE("a file no mirror serves fails with the reason, and is tried again only after the retry delay",
          "[downloads]") {
    const auto dir = freshDir("refused");
    const auto event = test::newLoop();
    daemon::DownloadSettings settings;
    settings.dir = dir / "out";
    settings.nice = false;
    settings.maxRate = 1e6;
    settings.retryDelay = 600s;
    settings.files = {file("b.bin", "the content", nicer::test::freeLoopbackPort())};
    auto downloads = daemon::DaemonDownloads::create(event.get(), settings);
    REQUIRE(downloads.ok());
    (*downloads)->start();
    CHECK(test::runLoopUntil(
        event.get(),
        [&] {
            const auto entries = (*downloads)->entries();
            return entries.size() == 1 && entries[0].state == DownloadState::Failed;
        },
        20s));

    const auto entries = (*downloads)->entries();
    REQUIRE(entries.size() == 1);
    INFO(entries[0].reason);
    CHECK_THAT(entries[0].reason, Catch::Contains("127.0.0.1"));
    REQUIRE(entries[0].retryInSeconds.has_value());
    CHECK(*entries[0].retryInSeconds > 0);
    CHECK(*entries[0].retryInSeconds <= 600);
    CHECK_FALSE((*downloads)->complete());
    CHECK_FALSE(std::filesystem::exists(dir / "out" / "b.bin"));
    CHECK((*downloads)->bandwidthMode() == api::BandwidthMode{api::BandwidthMode::Kind::Capped, 1'000'000});
}
