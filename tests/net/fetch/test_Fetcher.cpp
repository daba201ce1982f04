// The fetcher against REAL servers started by the h2_servers fixture (nghttpd and nginx, h2c and TLS, plus
// nginx locations that ignore Range, answer 503, send oversized headers or GOAWAY after four requests), and
// against MisbehavingH2Server for what no real server can be made to do on purpose.

#include "Skip.h"
#include "net/FetcherTestSupport.h"
#include "net/H2Servers.h"
#include "net/MisbehavingH2Server.h"
#include "net/NginxLog.h"
#include "net/fetch/Fetcher.h"
#include "net/fetch/SafePath.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <sched.h>
#include <set>
#include <string>
#include <sys/mount.h>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace nicer::net;
using namespace nicer::test;
using namespace std::chrono_literals;
using nicer::net::test::MisbehavingH2Server;

namespace {

std::string base(std::uint16_t port, bool tls = false) {
    return std::string(tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port);
}

std::uint16_t port(const std::string& variable) {
    return static_cast<std::uint16_t>(std::stoul(H2Servers::shared().get(variable)));
}

std::filesystem::path quirksLog() {
    return H2Servers::shared().get("H2_NGINX_QUIRKS_LOG");
}

/// Every file of @p files is in @p dir with its exact content, and no part file is left.
void requireAllInPlace(const ServedFiles& files, const std::filesystem::path& dir) {
    for (std::size_t i = 0; i < files.size(); ++i) {
        INFO(files.name(i));
        REQUIRE(readBytes(dir / files.name(i)) == files.content(i));
    }
    CHECK(partFiles(dir).empty());
}

MetalinkFile oneFile(const std::string& name, const std::string& content,
                     const std::vector<std::string>& urls) {
    MetalinkFile file;
    file.name = name;
    file.size = content.size();
    file.sha256 = sha256Of(content);
    int priority = 1;
    for (const auto& url : urls) {
        file.mirrors.push_back(Mirror{url, priority++});
    }
    return file;
}

/// Mounts a tmpfs of @p bytes on @p dir, in a mount namespace of this test process (needs root, as CI
/// has): empty, or why it cannot.
std::string mountSmallDisk(const std::filesystem::path& dir, std::size_t bytes, bool remount = false) {
    static const bool privateNamespace = [] {
        return ::unshare(CLONE_NEWNS) == 0 &&
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    }();
    if (!privateNamespace) {
        return "no mount namespace of its own (this test needs root): " + std::string(std::strerror(errno));
    }
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", remount ? MS_REMOUNT : 0, options.c_str()) != 0) {
        return "cannot mount a tmpfs on " + dir.string() + ": " + std::strerror(errno);
    }
    return {};
}

} // namespace

TEST_CASE("40 files over ONE connection to nginx, every hash verified", "[fetcher][nginx]") {
    ServedFiles served(H2Servers::shared().www, "fetch-many");
    for (int i = 0; i < 40; ++i) {
        // Heavy-ish tail: most small, a few large.
        const std::size_t size = i % 10 == 9 ? 1'500'000 + 10'000 * i : 1000 + 7919 * i;
        served.add("f" + std::to_string(i) + ".bin", size, 1000 + i);
    }
    TempDir dir;
    auto options = quickOptions();
    options.streams = 8;
    const auto report = fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), options);

    CHECK(report.totals.filesOk == 40);
    CHECK(report.totals.filesFailed == 0);
    CHECK(report.totals.connectionsOpened == 1);
    CHECK(report.totals.streamsOpened == 40);
    CHECK(report.totals.hashMismatches == 0);
    for (const auto& file : report.files) {
        CHECK(file.state == FileState::Ok);
        CHECK(file.verified);
        CHECK(file.attempts == 1);
    }
    requireAllInPlace(served, dir.path());

    // nginx's side: 40 requests, all on one TCP connection.
    const auto log = readNginxLog(quirksLog(), served.urlPath(0).substr(0, served.urlPath(0).rfind('/')));
    REQUIRE(log.size() == 40);
    std::set<std::uint64_t> connections;
    for (const auto& entry : log) {
        connections.insert(entry.connection);
        CHECK(entry.range.empty());
        CHECK(entry.status == 200);
    }
    CHECK(connections.size() == 1);
}

TEST_CASE("TLS to nghttpd and nginx with the test CA, one connection each", "[fetcher][tls]") {
    ServedFiles served(H2Servers::shared().www, "fetch-tls");
    for (int i = 0; i < 6; ++i) {
        served.add("t" + std::to_string(i) + ".bin", 20'000 * (i + 1), 77 + i);
    }
    for (const auto tlsPort : {H2Servers::shared().nghttpdTlsPort, H2Servers::shared().nginxTlsPort}) {
        INFO("port " << tlsPort);
        TempDir dir;
        auto options = quickOptions();
        options.tls.caFile = H2Servers::shared().caFile;
        const auto report = fetchAll(served.manifest({base(tlsPort, true)}), dir.path(), options);
        CHECK(report.totals.filesOk == 6);
        CHECK(report.totals.connectionsOpened == 1);
        requireAllInPlace(served, dir.path());
    }
}

TEST_CASE("An untrusted certificate or a wrong name fails every file with a clear reason", "[fetcher][tls]") {
    ServedFiles served(H2Servers::shared().www, "fetch-tls-bad");
    served.add("a.bin", 1000, 1);
    served.add("b.bin", 2000, 2);

    SECTION("untrusted CA") {
        TempDir dir;
        const auto report = fetchAll(served.manifest({base(H2Servers::shared().nghttpdTlsPort, true)}),
                                     dir.path(), quickOptions());
        CHECK(report.totals.filesFailed == 2);
        for (const auto& file : report.files) {
            CHECK_THAT(file.error, Catch::Contains("not trusted") && Catch::Contains("--ca-file"));
            CHECK(file.attempts == 1); // a certificate does not get better by retrying
        }
        CHECK_FALSE(std::filesystem::exists(dir.path() / "a.bin"));
    }
    SECTION("wrong host name") {
        TempDir dir;
        auto options = quickOptions();
        options.tls.caFile = H2Servers::shared().caFile;
        const auto report = fetchAll(served.manifest({base(H2Servers::shared().nghttpdWrongNamePort, true)}),
                                     dir.path(), options);
        CHECK(report.totals.filesFailed == 2);
        for (const auto& file : report.files) {
            CHECK_THAT(file.error,
                       Catch::Contains("not valid for localhost") && Catch::Contains("wrong.example"));
        }
    }
}

TEST_CASE("A part file resumes with a Range request and the hash covers all of it", "[fetcher][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-resume");
    const std::string& content = served.add("big.bin", 3'000'000, 5);
    TempDir dir;
    writeFile(dir.path() / "big.bin.part", content.substr(0, 1'234'567));

    const auto report =
        fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].resumedFrom == 1'234'567);
    CHECK(report.files[0].bytesDownloaded == 3'000'000 - 1'234'567);
    requireAllInPlace(served, dir.path());
    const auto log = readNginxLog(quirksLog(), served.urlPath(0));
    REQUIRE(log.size() == 1);
    CHECK(log[0].range == "bytes=1234567-");
    CHECK(log[0].status == 206);
}

TEST_CASE("What earlier runs left is hashed a piece at a time, with the loop turning in between",
          "[fetcher][resume]") {
    TempDir dir;
    const std::string done(40 * 1024 * 1024, 'd');
    const std::string whole(20 * 1024 * 1024, 'w');
    writeFile(dir.path() / "done.bin", done);
    writeFile(dir.path() / "whole.bin.part", whole); // killed between its last byte and the rename
    // Nothing is asked of a server: the port is closed.
    const std::string nowhere = base(port("H2_CLOSED_PORT"));
    std::vector<MetalinkFile> files{oneFile("done.bin", done, {nowhere + "/done.bin"}),
                                    oneFile("whole.bin", whole, {nowhere + "/whole.bin"})};

    const auto event = newLoop();
    auto fetcher = Fetcher::create(event.get(), std::move(files), dir.path(), quickOptions());
    REQUIRE(fetcher);
    REQUIRE((*fetcher)->start());
    // start() only queues the work; the hashing happens on the loop.
    CHECK((*fetcher)->report().files[0].state == FileState::Checking);

    // Another event source on the same loop: how often it gets a turn while the files are being checked.
    struct Turns {
        const Fetcher* fetcher;
        int whileChecking = 0;
    } turns{fetcher->get()};
    sd_event_source* source = nullptr;
    REQUIRE(sd_event_add_defer(
                event.get(), &source,
                [](sd_event_source* s, void* data) noexcept {
                    auto* t = static_cast<Turns*>(data);
                    const auto& report = t->fetcher->report();
                    t->whileChecking +=
                        std::any_of(report.files.begin(), report.files.end(),
                                    [](const FetchFileReport& f) { return f.state == FileState::Checking; });
                    // Re-armed each time, as the fetcher's own: an always-on defer source would never
                    // leave the pending queue and starve every other source of the loop.
                    return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                },
                &turns) >= 0);
    const libsystemd::EventSourcePtr other(source);
    REQUIRE(sd_event_source_set_enabled(source, SD_EVENT_ONESHOT) >= 0);
    while (!(*fetcher)->finished()) {
        REQUIRE(sd_event_run(event.get(), UINT64_MAX) >= 0);
    }

    const auto& report = (*fetcher)->report();
    CHECK(report.files[0].state == FileState::AlreadyPresent);
    CHECK(report.files[1].state == FileState::Ok);
    CHECK(report.totals.connectionsOpened == 0);
    CHECK(readBytes(dir.path() / "whole.bin") == whole);
    // 60 MiB in pieces of 8 MiB: the other source ran between the pieces, not only before and after.
    CHECK(turns.whileChecking >= 6);
}

TEST_CASE("A part file with wrong bytes is caught by the hash, discarded and fetched again",
          "[fetcher][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-corrupt-part");
    const std::string& content = served.add("c.bin", 500'000, 6);
    TempDir dir;
    std::string corrupt = content.substr(0, 200'000);
    corrupt[1000] ^= 0x55;
    writeFile(dir.path() / "c.bin.part", corrupt);

    const auto report =
        fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.totals.hashMismatches == 1);
    CHECK(report.files[0].attempts == 2);
    requireAllInPlace(served, dir.path());
}

TEST_CASE("A complete part file left by a kill before the rename is verified without a request",
          "[fetcher][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-whole-part");
    const std::string& content = served.add("w.bin", 100'000, 8);
    TempDir dir;
    writeFile(dir.path() / "w.bin.part", content);
    const auto report =
        fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.totals.connectionsOpened == 0);
    CHECK(report.files[0].attempts == 0);
    requireAllInPlace(served, dir.path());
}

TEST_CASE("A server that ignores Range: the part file starts over, never a full body after a prefix",
          "[fetcher][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-norange");
    const std::string& content = served.add("n.bin", 800'000, 9);

    SECTION("nginx with max_ranges 0") {
        TempDir dir;
        writeFile(dir.path() / "n.bin.part", content.substr(0, 300'000));
        const auto report = fetchAll(served.manifest({H2Servers::shared().quirksBase()}, "/norange"),
                                     dir.path(), quickOptions());
        REQUIRE(report.files[0].state == FileState::Ok);
        CHECK(report.totals.rangeIgnored == 1);
        CHECK(report.files[0].bytesDownloaded == 800'000);
        CHECK(report.totals.hashMismatches == 0);
        requireAllInPlace(served, dir.path());
    }
    SECTION("nghttpd, which does not implement Range") {
        TempDir dir;
        writeFile(dir.path() / "n.bin.part", content.substr(0, 300'000));
        const auto report =
            fetchAll(served.manifest({base(H2Servers::shared().nghttpdH2cPort)}), dir.path(), quickOptions());
        REQUIRE(report.files[0].state == FileState::Ok);
        CHECK(report.totals.rangeIgnored == 1);
        requireAllInPlace(served, dir.path());
    }
}

TEST_CASE("A wrong hash in the manifest: the file fails, nothing under its name, no part left",
          "[fetcher][hash]") {
    ServedFiles served(H2Servers::shared().www, "fetch-badhash");
    served.add("h.bin", 100'000, 10);
    served.add("ok.bin", 50'000, 11);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files[0].sha256 = std::string(64, 'a');
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 2;
    const auto report = fetchAll(files, dir.path(), options);
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error, Catch::Contains("SHA-256 mismatch"));
    CHECK(report.files[0].attempts == 2);
    CHECK(report.totals.hashMismatches == 2);
    CHECK(report.files[1].state == FileState::Ok);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "h.bin"));
    CHECK(partFiles(dir.path()).empty());
}

TEST_CASE("GOAWAY from nginx after 4 requests: the rest go to new connections, all verified",
          "[fetcher][goaway]") {
    ServedFiles served(H2Servers::shared().www, "fetch-goaway");
    for (int i = 0; i < 12; ++i) {
        served.add("g" + std::to_string(i) + ".bin", 30'000 + 1000 * i, 200 + i);
    }
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 1; // a GOAWAY'd stream must not count as a failed attempt
    const auto report = fetchAll(served.manifest({base(port("H2_NGINX_GOAWAY_PORT"))}), dir.path(), options);
    CHECK(report.totals.filesOk == 12);
    CHECK(report.totals.connectionsOpened >= 3);
    CHECK(report.totals.retries > 0);
    requireAllInPlace(served, dir.path());
}

TEST_CASE("A connection cut mid-body (GOAWAY and close): resumed on a new connection", "[fetcher][goaway]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(600'000, 12);
    MisbehavingH2Server::Behaviour behaviour;
    behaviour.body = content;
    behaviour.goAwayAfter = 250'000;
    behaviour.times = 1;
    server.serve("/cut.bin", behaviour);
    TempDir dir;
    const auto report =
        fetchAll({oneFile("cut.bin", content, {server.url("/cut.bin")})}, dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.totals.connectionsOpened == 2);
    CHECK(server.connectionsAccepted() == 2);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].range == "bytes=250000-");
    CHECK(requests[1].connection == 2);
    CHECK(readBytes(dir.path() / "cut.bin") == content);
}

TEST_CASE("RST_STREAM mid-body: the stream is retried from where it stopped", "[fetcher][reset]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(400'000, 13);
    MisbehavingH2Server::Behaviour behaviour;
    behaviour.body = content;
    behaviour.resetAfter = 100'000;
    behaviour.times = 1;
    server.serve("/r.bin", behaviour);
    server.serve("/other.bin", MisbehavingH2Server::Behaviour::plain(content.substr(0, 1000)));
    TempDir dir;
    const auto report = fetchAll({oneFile("r.bin", content, {server.url("/r.bin")}),
                                  oneFile("other.bin", content.substr(0, 1000), {server.url("/other.bin")})},
                                 dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].attempts == 2);
    CHECK(report.files[1].state == FileState::Ok);
    CHECK(report.totals.connectionsOpened == 1); // only that stream was reset
    std::vector<std::string> ranges;
    for (const auto& request : server.requests()) {
        if (request.path == "/r.bin") {
            ranges.push_back(request.range);
        }
    }
    CHECK(ranges == std::vector<std::string>{"", "bytes=100000-"});
    CHECK(readBytes(dir.path() / "r.bin") == content);
}

TEST_CASE("REFUSED_STREAM is retried without counting as a failed attempt", "[fetcher][reset]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(10'000, 14);
    MisbehavingH2Server::Behaviour behaviour;
    behaviour.body = content;
    behaviour.refuse = true;
    behaviour.times = 3;
    server.serve("/x.bin", behaviour);
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 1;
    const auto report = fetchAll({oneFile("x.bin", content, {server.url("/x.bin")})}, dir.path(), options);
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].attempts == 4);
    CHECK(server.requests().size() == 4);
}

TEST_CASE("A stalled server: the connection is dropped after the stall timeout and retried",
          "[fetcher][stall]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(300'000, 15);
    MisbehavingH2Server::Behaviour behaviour;
    behaviour.body = content;
    behaviour.stallAfter = 50'000;

    SECTION("once: the retry resumes and succeeds") {
        behaviour.times = 1;
        server.serve("/s.bin", behaviour);
        TempDir dir;
        auto options = quickOptions();
        options.stallTimeout = 500ms;
        const auto report =
            fetchAll({oneFile("s.bin", content, {server.url("/s.bin")})}, dir.path(), options);
        REQUIRE(report.files[0].state == FileState::Ok);
        CHECK(server.connectionsAccepted() == 2);
        const auto requests = server.requests();
        REQUIRE(requests.size() == 2);
        CHECK(requests[1].range == "bytes=50000-");
        CHECK(readBytes(dir.path() / "s.bin") == content);
    }
    SECTION("always: the file fails and says the server stalled") {
        server.serve("/s.bin", behaviour);
        TempDir dir;
        auto options = quickOptions();
        options.stallTimeout = 300ms;
        options.attemptsPerMirror = 2;
        const auto report =
            fetchAll({oneFile("s.bin", content, {server.url("/s.bin")})}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error, Catch::Contains("stalled") && Catch::Contains("0.3 s"));
        CHECK_FALSE(std::filesystem::exists(dir.path() / "s.bin"));
        // The prefix received is kept for a later run: 50 kB from each of the two attempts.
        CHECK(std::filesystem::file_size(dir.path() / "s.bin.part") == 100'000);
    }
}

TEST_CASE("Oversized response headers: that file fails, the others on the connection complete",
          "[fetcher][headers]") {
    ServedFiles served(H2Servers::shared().www, "fetch-bigheaders");
    served.add("big-headers.bin", 5000, 16);
    served.add("fine.bin", 6000, 17);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files[0].mirrors[0].url = H2Servers::shared().quirksBase() + "/bigheaders" + served.urlPath(0);
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 2;
    const auto report = fetchAll(files, dir.path(), options);
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error, Catch::Contains("headers too large"));
    CHECK(report.files[1].state == FileState::Ok);
    CHECK(report.totals.connectionsOpened == 1);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "big-headers.bin"));
}

TEST_CASE("A lying Content-Length is never accepted", "[fetcher][length]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(200'000, 18);
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 2;

    SECTION("announcing another size than the manifest's") {
        MisbehavingH2Server::Behaviour behaviour;
        behaviour.body = content;
        behaviour.contentLength = 250'000;
        server.serve("/l.bin", behaviour);
        const auto report =
            fetchAll({oneFile("l.bin", content, {server.url("/l.bin")})}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error,
                   Catch::Contains("250000") && Catch::Contains("manifest says 200000"));
        CHECK_FALSE(std::filesystem::exists(dir.path() / "l.bin"));
    }
    SECTION("a body shorter than announced (nghttp2 resets the stream), then a good response") {
        MisbehavingH2Server::Behaviour behaviour;
        behaviour.body = content;
        behaviour.endAfter = 120'000;
        behaviour.times = 1;
        server.serve("/l.bin", behaviour);
        const auto report =
            fetchAll({oneFile("l.bin", content, {server.url("/l.bin")})}, dir.path(), options);
        REQUIRE(report.files[0].state == FileState::Ok);
        CHECK(report.files[0].attempts == 2);
        CHECK(readBytes(dir.path() / "l.bin") == content);
    }
    SECTION("without a hash or size to check (a plain URL), a short body is still refused") {
        // Every response stops 50 kB in: two attempts keep a 100 kB prefix, and no file is accepted.
        MisbehavingH2Server::Behaviour behaviour;
        behaviour.body = content;
        behaviour.endAfter = 50'000;
        server.serve("/l.bin", behaviour);
        MetalinkFile file;
        file.name = "l.bin";
        file.mirrors.push_back(Mirror{server.url("/l.bin"), 1});
        const auto report = fetchAll({file}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_FALSE(report.files[0].verified);
        CHECK_FALSE(std::filesystem::exists(dir.path() / "l.bin"));
        CHECK(std::filesystem::file_size(dir.path() / "l.bin.part") == 100'000);
    }
}

TEST_CASE("A plain URL without hash downloads unverified, its digest reported", "[fetcher][unverified]") {
    ServedFiles served(H2Servers::shared().www, "fetch-plain");
    const std::string& content = served.add("p.bin", 70'000, 19);
    MetalinkFile file;
    file.name = "p.bin";
    file.mirrors.push_back(Mirror{H2Servers::shared().quirksBase() + served.urlPath(0), 1});
    TempDir dir;
    const auto report = fetchAll({file}, dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK_FALSE(report.files[0].verified);
    CHECK(report.totals.filesUnverified == 1);
    CHECK(report.files[0].sha256 == sha256Of(content));
    CHECK(report.files[0].size == 70'000u);
    CHECK(readBytes(dir.path() / "p.bin") == content);
}

TEST_CASE("503 with Retry-After is honoured, then the file fails naming the status", "[fetcher][retry]") {
    TempDir dir;
    auto options = quickOptions();
    options.attemptsPerMirror = 2;
    const auto start = std::chrono::steady_clock::now();
    const auto report =
        fetchAll({oneFile("busy.bin", "x", {H2Servers::shared().quirksBase() + "/busy/busy.bin"})},
                 dir.path(), options);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(report.files[0].state == FileState::Failed);
    CHECK(report.files[0].attempts == 2);
    CHECK_THAT(report.files[0].error, Catch::Contains("503"));
    // Retry-After: 1 overrides the 10 ms backoff: a lower bound the server asked for.
    CHECK(elapsed >= 1s);
}

TEST_CASE("404 on the first mirror: straight to the next one", "[fetcher][mirrors]") {
    ServedFiles served(H2Servers::shared().www, "fetch-mirrors");
    served.add("m.bin", 30'000, 20);
    auto files =
        served.manifest({H2Servers::shared().quirksBase(), base(H2Servers::shared().nghttpdH2cPort)});
    files[0].mirrors[0].url = H2Servers::shared().quirksBase() + "/no-such-dir/m.bin";
    TempDir dir;
    const auto report = fetchAll(files, dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].attempts == 2);
    CHECK(report.files[0].mirrorUsed == files[0].mirrors[1].url);
    CHECK(report.totals.connectionsOpened == 2);
    CHECK(readNginxLog(quirksLog(), "/no-such-dir/m.bin").size() >= 1);
    requireAllInPlace(served, dir.path());
}

TEST_CASE("Every mirror failing: the file fails and says so, the others go on", "[fetcher][mirrors]") {
    ServedFiles served(H2Servers::shared().www, "fetch-allfail");
    served.add("ok.bin", 1000, 21);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files.push_back(oneFile("gone.bin", "content",
                            {H2Servers::shared().quirksBase() + "/none/gone.bin",
                             base(H2Servers::shared().nghttpdH2cPort) + "/none/gone.bin"}));
    TempDir dir;
    const auto report = fetchAll(files, dir.path(), quickOptions());
    CHECK(report.files[0].state == FileState::Ok);
    CHECK(report.files[1].state == FileState::Failed);
    CHECK_THAT(report.files[1].error, Catch::Contains("404") && Catch::Contains("all 2 mirrors failed"));
}

TEST_CASE("Redirects are followed, relative ones too, on the same connection", "[fetcher][redirects]") {
    ServedFiles served(H2Servers::shared().www, "fetch-redirect");
    served.add("chain.bin", 200'000, 31);
    served.add("rel.bin", 50'000, 32);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files[0].mirrors[0].url =
        H2Servers::shared().quirksBase() + "/moved" + served.urlPath(0); // 301, then 307
    files[1].mirrors[0].url = H2Servers::shared().quirksBase() + "/relative/a" + served.urlPath(1);
    TempDir dir;
    const auto report = fetchAll(files, dir.path(), quickOptions());
    REQUIRE(report.totals.filesOk == 2);
    requireAllInPlace(served, dir.path());
    CHECK(report.totals.redirects == 3);
    CHECK(report.totals.connectionsOpened == 1);
    CHECK(report.files[0].attempts == 1);
    CHECK(report.files[0].mirrorUsed == H2Servers::shared().quirksBase() + served.urlPath(0));
    CHECK(report.files[1].mirrorUsed == H2Servers::shared().quirksBase() + served.urlPath(1));

    // nginx's side: each hop asked once, and the file itself served by the last request.
    const auto moved = readNginxLog(quirksLog(), "/moved" + served.urlPath(0));
    const auto hop = readNginxLog(quirksLog(), "/hop" + served.urlPath(0));
    const auto final = readNginxLog(quirksLog(), served.urlPath(0));
    REQUIRE(moved.size() == 1);
    REQUIRE(hop.size() == 1);
    REQUIRE(final.size() == 1);
    CHECK(moved[0].status == 301);
    CHECK(hop[0].status == 307);
    CHECK(final[0].status == 200);
}

TEST_CASE("A redirect to another origin opens a connection there", "[fetcher][redirects]") {
    ServedFiles served(H2Servers::shared().www, "fetch-redirect-origin");
    served.add("o.bin", 80'000, 33);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files[0].mirrors[0].url = H2Servers::shared().quirksBase() + "/elsewhere" + served.urlPath(0);
    TempDir dir;
    const auto report = fetchAll(files, dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    requireAllInPlace(served, dir.path());
    CHECK(report.totals.redirects == 1);
    CHECK(report.totals.connectionsOpened == 2);
    CHECK(report.files[0].mirrorUsed == base(H2Servers::shared().nghttpdH2cPort) + served.urlPath(0));
}

TEST_CASE("A resumed download keeps its Range through the redirects", "[fetcher][redirects][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-redirect-resume");
    const std::string& content = served.add("r.bin", 1'000'000, 34);
    auto files = served.manifest({H2Servers::shared().quirksBase()});
    files[0].mirrors[0].url = H2Servers::shared().quirksBase() + "/moved" + served.urlPath(0);
    TempDir dir;
    writeFile(dir.path() / "r.bin.part", content.substr(0, 400'000));
    const auto report = fetchAll(files, dir.path(), quickOptions());
    REQUIRE(report.files[0].state == FileState::Ok);
    requireAllInPlace(served, dir.path());
    CHECK(report.files[0].resumedFrom == 400'000);
    CHECK(report.files[0].bytesDownloaded == 600'000);
    const auto final = readNginxLog(quirksLog(), served.urlPath(0));
    REQUIRE(final.size() == 1);
    CHECK(final[0].range == "bytes=400000-");
    CHECK(final[0].status == 206);
}

TEST_CASE("Redirect loops, https to http and redirects to nowhere give the mirror up, saying why",
          "[fetcher][redirects]") {
    ServedFiles served(H2Servers::shared().www, "fetch-redirect-bad");
    served.add("b.bin", 10'000, 35);
    const std::string path = served.urlPath(0);
    auto loop = served.manifest({H2Servers::shared().quirksBase()})[0];
    loop.mirrors = {Mirror{H2Servers::shared().quirksBase() + "/loop" + path, 1}};
    auto downgrade = loop;
    downgrade.mirrors = {Mirror{base(H2Servers::shared().nginxTlsPort, true) + "/downgrade" + path, 1}};
    auto nowhere = loop;
    nowhere.mirrors = {Mirror{H2Servers::shared().quirksBase() + "/nowhere" + path, 1}};
    auto options = quickOptions();
    options.tls.caFile = H2Servers::shared().caFile;
    for (const auto& [file, expected] : {std::pair{loop, "redirect number 11 in a row"},
                                         std::pair{downgrade, "from https to http is not followed"},
                                         std::pair{nowhere, "no Location header"}}) {
        INFO(file.mirrors[0].url);
        TempDir dir;
        const auto report = fetchAll({file}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error, Catch::Contains(expected));
        CHECK(report.files[0].attempts == 1);
        CHECK_FALSE(std::filesystem::exists(dir.path() / "b.bin"));
    }
    // The loop's requests: the first and ten redirects followed, then nicer stopped asking.
    CHECK(readNginxLog(quirksLog(), "/loop" + path).size() == 11);

    // With a second mirror, the file comes from there.
    auto twoMirrors = loop;
    twoMirrors.mirrors.push_back(Mirror{base(H2Servers::shared().nghttpdH2cPort) + path, 2});
    TempDir dir;
    const auto report = fetchAll({twoMirrors}, dir.path(), options);
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].mirrorUsed == twoMirrors.mirrors[1].url);
    requireAllInPlace(served, dir.path());
}

TEST_CASE("Names that leave the directory refuse the whole manifest before anything is written",
          "[fetcher][paths]") {
    TempDir parent;
    const auto dir = parent.path() / "downloads";
    for (const std::string name : {"../evil", "a/../../evil", "/etc/evil", "a/./b", "x.part", "a\\..\\b"}) {
        INFO(name);
        MetalinkFile good = oneFile("good.bin", "good", {H2Servers::shared().quirksBase() + "/good.bin"});
        MetalinkFile bad = oneFile(name, "evil", {H2Servers::shared().quirksBase() + "/evil"});
        const auto event = newLoop();
        const auto fetcher = Fetcher::create(event.get(), {good, bad}, dir, quickOptions());
        REQUIRE_FALSE(fetcher);
        CHECK_THAT(fetcher.error().message, Catch::Contains("fix the manifest"));
    }
    CHECK_FALSE(std::filesystem::exists(dir));
    CHECK_FALSE(std::filesystem::exists(parent.path() / "evil"));
}

TEST_CASE("Files already in place are skipped, a wrong one is replaced only after verification",
          "[fetcher][resume]") {
    ServedFiles served(H2Servers::shared().www, "fetch-present");
    served.add("a.bin", 10'000, 22);
    served.add("b.bin", 20'000, 23);
    TempDir dir;
    writeFile(dir.path() / "a.bin", served.content(0));
    writeFile(dir.path() / "b.bin", "stale content");
    const auto report =
        fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
    CHECK(report.files[0].state == FileState::AlreadyPresent);
    CHECK(report.files[0].attempts == 0);
    CHECK(report.files[1].state == FileState::Ok);
    requireAllInPlace(served, dir.path());

    const auto again =
        fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
    CHECK(again.totals.filesAlreadyPresent == 2);
    CHECK(again.totals.connectionsOpened == 0);
}

TEST_CASE("Completion order: SRPT serves the smallest first, FIFO the manifest's order", "[fetcher][order]") {
    ServedFiles served(H2Servers::shared().www, "fetch-order");
    const std::vector<std::size_t> sizes{900'000, 100'000, 500'000, 50'000, 300'000};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        served.add("o" + std::to_string(i) + ".bin", sizes[i], 300 + i);
    }
    for (const auto order : {DownloadOrder::Srpt, DownloadOrder::Fifo}) {
        INFO(toString(order));
        TempDir dir;
        auto options = quickOptions();
        options.streams = 1;
        options.order = order;
        FinishOrder finished;
        const auto report =
            fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), options, &finished);
        CHECK(report.totals.filesOk == sizes.size());
        const std::vector<std::size_t> expected = order == DownloadOrder::Srpt
                                                      ? std::vector<std::size_t>{3, 1, 4, 2, 0}
                                                      : std::vector<std::size_t>{0, 1, 2, 3, 4};
        CHECK(finished.order == expected);
    }
}

TEST_CASE("Never more streams than asked for, each with an RFC 9218 priority", "[fetcher][order]") {
    MisbehavingH2Server server;
    std::vector<MetalinkFile> files;
    for (int i = 0; i < 10; ++i) {
        const std::string path = "/k" + std::to_string(i) + ".bin";
        const std::string content = randomBytes(150'000, 400 + i);
        server.serve(path, MisbehavingH2Server::Behaviour::plain(content));
        files.push_back(oneFile(path.substr(1), content, {server.url(path)}));
    }
    TempDir dir;
    auto options = quickOptions();
    options.streams = 3;
    const auto report = fetchAll(files, dir.path(), options);
    CHECK(report.totals.filesOk == 10);
    CHECK(server.maxOpenStreams() <= 3);
    CHECK(server.maxOpenStreams() >= 1);
    for (const auto& request : server.requests()) {
        CHECK(request.priority == "u=3");
    }
}

TEST_CASE("The rate cap (--max-rate) is enforced through flow control", "[fetcher][rate]") {
    ServedFiles served(H2Servers::shared().www, "fetch-rate");
    served.add("r.bin", 4 << 20, 24);
    TempDir dir;
    auto options = quickOptions();
    options.maxRate = 1 << 20;
    const auto start = std::chrono::steady_clock::now();
    const auto report = fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), options);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    REQUIRE(report.files[0].state == FileState::Ok);
    // 4 MiB at 1 MiB/s: at least 3 s even with the initial window's worth arriving at once. A lower bound
    // only, which the cap implies; no upper bound on a shared machine.
    CHECK(elapsed >= 3s);
    CHECK(report.totals.rateLimit == Approx(1 << 20));
    requireAllInPlace(served, dir.path());
}

TEST_CASE("Two fetches into one directory at once: the second is refused", "[fetcher]") {
    TempDir dir;
    const auto event = newLoop();
    auto first = Fetcher::create(
        event.get(), {oneFile("a.bin", "a", {H2Servers::shared().quirksBase() + "/a.bin"})}, dir.path());
    auto second = Fetcher::create(
        event.get(), {oneFile("a.bin", "a", {H2Servers::shared().quirksBase() + "/a.bin"})}, dir.path());
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE((*first)->start());
    const auto refused = (*second)->start();
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("another nicer fetch"));
}

TEST_CASE(
    "A disk that fills up at a random point fails the file with the reason, keeps a true prefix, and the "
    "next run with space completes",
    "[fetcher][faults]") {
    {
        // Whether this machine lets the test mount a disk at all, asked before anything is asserted.
        TempDir probe;
        if (const auto why = mountSmallDisk(probe.path(), 4096); !why.empty()) {
            NICER_SKIP(why);
        }
        ::umount2(probe.path().c_str(), MNT_DETACH);
    }
    ServedFiles served(H2Servers::shared().www, "fetch-disk-full");
    const std::string& content = served.add("unit.bin", 3'000'000, 11);
    std::mt19937 random(std::random_device{}());
    constexpr int kRuns = 20;
    int failedClearly = 0;
    int completedAfter = 0;
    for (int run = 0; run < kRuns; ++run) {
        TempDir dir;
        // Room for between 4% and 96% of the file: the disk fills at a different point each run.
        const std::size_t room = 120'000 + random() % 2'760'000;
        REQUIRE(mountSmallDisk(dir.path(), room) == "");
        INFO("run " << run << ": a disk of " << room << " bytes");
        const auto full =
            fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
        const auto& file = full.files[0];
        CHECK(file.state == FileState::Failed);
        CHECK_THAT(file.error, Catch::Contains("No space left on device"));
        failedClearly += file.state == FileState::Failed &&
                         file.error.find("No space left on device") != std::string::npos;
        CHECK_FALSE(std::filesystem::exists(dir.path() / "unit.bin"));
        // What is on disk is the file's true beginning: nothing after a failed write counts.
        const auto part = readBytes(dir.path() / "unit.bin.part");
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); // tmpfs rounds up to it
        CHECK(part.size() <= (room + page - 1) / page * page);
        CHECK(part == content.substr(0, part.size()));

        // Space again: the next run resumes from the prefix and the hash covers the whole file.
        REQUIRE(mountSmallDisk(dir.path(), 8'000'000, true).empty());
        const auto again =
            fetchAll(served.manifest({H2Servers::shared().quirksBase()}), dir.path(), quickOptions());
        CHECK(again.files[0].state == FileState::Ok);
        CHECK(again.files[0].resumedFrom == part.size());
        CHECK(readBytes(dir.path() / "unit.bin") == content);
        completedAfter += again.files[0].state == FileState::Ok;
        ::umount2(dir.path().c_str(), MNT_DETACH);
    }
    WARN("disk full: " << failedClearly << " of " << kRuns << " downloads failed with the reason and kept a "
                       << "true prefix; " << completedAfter << " completed, verified, once there was space");
    CHECK(failedClearly == kRuns);
    CHECK(completedAfter == kRuns);
}
