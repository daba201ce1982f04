// `nicer fetch` end to end against the REAL servers of the h2_servers fixture: exit statuses, messages, the
// JSON summary, and resuming after kill -9 at random moments.

#include "Poll.h"
#include "cli/RunCommand.h"
#include "net/FetcherTestSupport.h"
#include "net/H2Servers.h"
#include "net/NginxLog.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace nicer::test;
using namespace std::chrono_literals;

namespace {

const std::string kNicer = NICER_CLI;

std::string quote(const std::string& text) {
    std::string quoted = "'";
    for (const char c : text) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string escapeXml(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

/// A Metalink 4 document for @p files.
std::string metalink(const std::vector<net::MetalinkFile>& files) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n";
    for (const auto& file : files) {
        xml += "  <file name=\"" + escapeXml(file.name) + "\">\n";
        if (file.size) {
            xml += "    <size>" + std::to_string(*file.size) + "</size>\n";
        }
        xml += "    <hash type=\"sha-256\">" + file.sha256 + "</hash>\n";
        for (const auto& mirror : file.mirrors) {
            xml += "    <url priority=\"" + std::to_string(mirror.priority) + "\">" + escapeXml(mirror.url) +
                   "</url>\n";
        }
        xml += "  </file>\n";
    }
    return xml + "</metalink>\n";
}

CommandResult fetch(const std::string& arguments) {
    // `timeout`: a hung fetch fails the test instead of hanging CTest.
    return runCommand("timeout 120 " + kNicer + " fetch " + arguments);
}

/// Sizes of the part files below @p dir, by file name (without ".part").
std::map<std::string, std::uint64_t> partSizes(const std::filesystem::path& dir) {
    std::map<std::string, std::uint64_t> sizes;
    for (const auto& path : partFiles(dir)) {
        auto name = std::filesystem::relative(path, dir).string();
        name.resize(name.size() - 5);
        sizes[name] = std::filesystem::file_size(path);
    }
    return sizes;
}

/// Starts `nicer fetch ARGS...` with stdout and stderr in files; returns its pid.
pid_t spawnFetch(const std::vector<std::string>& arguments, const std::filesystem::path& output) {
    std::vector<std::string> argv{kNicer, "fetch"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> raw;
    for (auto& argument : argv) {
        raw.push_back(argument.data());
    }
    raw.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execv(raw[0], raw.data());
        ::_exit(127);
    }
    return pid;
}

} // namespace

TEST_CASE("nicer fetch: an untrusted certificate fails with exit 1 and says to pass --ca-file",
          "[cli][tls]") {
    TempDir dir;
    const auto r = fetch("https://localhost:" + std::to_string(H2Servers::shared().nginxTlsPort) +
                         "/1k.bin --dir " + quote(dir.path().string()));
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.err, Catch::Contains("TLS: certificate of localhost") && Catch::Contains("is not trusted") &&
                          Catch::Contains("pass --ca-file"));
    CHECK_FALSE(std::filesystem::exists(dir.path() / "1k.bin"));
}

TEST_CASE("nicer fetch: a certificate for another name fails with exit 1", "[cli][tls]") {
    TempDir dir;
    const auto r = fetch("https://localhost:" + std::to_string(H2Servers::shared().nghttpdWrongNamePort) +
                         "/1k.bin --ca-file " + quote(H2Servers::shared().caFile.string()) + " --dir " +
                         quote(dir.path().string()));
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.err, Catch::Contains("not valid for localhost") && Catch::Contains("wrong.example"));
}

TEST_CASE("nicer fetch: a Metalink over TLS with --ca-file, JSON summary", "[cli][tls]") {
    ServedFiles served(H2Servers::shared().www, "cli-tls");
    for (int i = 0; i < 5; ++i) {
        served.add("d/f" + std::to_string(i) + ".bin", 40'000 + 5000 * i, 500 + i);
    }
    TempDir work;
    writeFile(work.path() / "m.meta4",
              metalink(served.manifest(
                  {"https://localhost:" + std::to_string(H2Servers::shared().nghttpdTlsPort)})));
    const auto r =
        fetch(quote((work.path() / "m.meta4").string()) + " --dir " + quote((work.path() / "out").string()) +
              " --ca-file " + quote(H2Servers::shared().caFile.string()) + " --json");
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    const auto summary = nlohmann::json::parse(r.out);
    CHECK(summary["totals"]["ok"] == 5);
    CHECK(summary["totals"]["connectionsOpened"] == 1);
    CHECK(summary["totals"]["streamsOpened"] == 5);
    for (const auto& file : summary["files"]) {
        CHECK(file["state"] == "ok");
        CHECK(file["verified"] == true);
        CHECK(file["resumedFrom"] == 0);
    }
    for (std::size_t i = 0; i < served.size(); ++i) {
        CHECK(readBytes(work.path() / "out" / served.name(i)) == served.content(i));
    }
}

TEST_CASE("nicer fetch: bad input exits 2 and writes nothing", "[cli][input]") {
    TempDir work;
    const auto out = work.path() / "out";
    const auto args = " --dir " + quote(out.string());

    SECTION("a missing manifest") {
        const auto r = fetch(quote((work.path() / "none.meta4").string()) + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("none.meta4"));
    }
    SECTION("a manifest that is not Metalink") {
        writeFile(work.path() / "bad.meta4", "<html>not a manifest</html>");
        const auto r = fetch(quote((work.path() / "bad.meta4").string()) + args);
        CHECK(r.exitCode == 2);
    }
    SECTION("a name that leaves the directory refuses the whole manifest") {
        net::MetalinkFile good;
        good.name = "good.bin";
        good.size = 1024;
        good.sha256 = std::string(64, '0');
        good.mirrors.push_back(net::Mirror{H2Servers::shared().quirksBase() + "/1k.bin", 1});
        net::MetalinkFile evil = good;
        evil.name = "../evil.bin";
        writeFile(work.path() / "evil.meta4", metalink({good, evil}));
        const auto r = fetch(quote((work.path() / "evil.meta4").string()) + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("../evil.bin") && Catch::Contains("fix the manifest"));
        CHECK_FALSE(std::filesystem::exists(work.path() / "evil.bin"));
        CHECK_FALSE(std::filesystem::exists(out / "good.bin"));
    }
    SECTION("a bad --max-rate") {
        const auto r = fetch(H2Servers::shared().quirksBase() + "/1k.bin --max-rate 10X" + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("--max-rate") && Catch::Contains("e.g. 500k or 10M"));
    }
    SECTION("a bad --min-rate") {
        const auto r = fetch(H2Servers::shared().quirksBase() + "/1k.bin --min-rate slow" + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("--min-rate") && Catch::Contains("e.g. 500k or 10M"));
    }
    SECTION("a bad --order") {
        const auto r = fetch(H2Servers::shared().quirksBase() + "/1k.bin --order random" + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("srpt") && Catch::Contains("fifo"));
    }
    SECTION("--streams 0") {
        CHECK(fetch(H2Servers::shared().quirksBase() + "/1k.bin --streams 0" + args).exitCode == 2);
    }
    SECTION("an unreadable --ca-file") {
        const auto r =
            fetch(H2Servers::shared().quirksBase() + "/1k.bin --ca-file /nonexistent/ca.pem" + args);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("/nonexistent/ca.pem"));
    }
    SECTION("a URL that names no file") {
        CHECK(fetch(H2Servers::shared().quirksBase() + "/ " + args).exitCode == 2);
    }
    CHECK_FALSE(std::filesystem::exists(out / "1k.bin"));
}

TEST_CASE("nicer fetch URL: one file, reported unverified", "[cli][url]") {
    TempDir work;
    const auto r =
        fetch(H2Servers::shared().quirksBase() + "/64k.bin --json --dir " + quote(work.path().string()));
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK_THAT(r.err, Catch::Contains("unverified"));
    const auto summary = nlohmann::json::parse(r.out);
    CHECK(summary["files"][0]["verified"] == false);
    CHECK(summary["totals"]["unverified"] == 1);
    CHECK(readBytes(work.path() / "64k.bin") == readBytes(H2Servers::shared().www / "64k.bin"));
}

TEST_CASE("nicer fetch URL.meta4: the manifest is downloaded, then its files", "[cli][url]") {
    ServedFiles served(H2Servers::shared().www, "cli-remote-manifest");
    served.add("x.bin", 12'345, 600);
    served.add("y.bin", 54'321, 601);
    writeFile(served.dir() / "list.meta4", metalink(served.manifest({H2Servers::shared().quirksBase()})));
    TempDir work;
    const auto r = fetch(H2Servers::shared().quirksBase() + "/" + served.dir().filename().string() +
                         "/list.meta4 --json --dir " + quote(work.path().string()));
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(nlohmann::json::parse(r.out)["totals"]["ok"] == 2);
    CHECK(readBytes(work.path() / "x.bin") == served.content(0));
    CHECK_FALSE(std::filesystem::exists(work.path() / "list.meta4"));
}

TEST_CASE("nicer fetch --nice completes and verifies", "[cli][nice]") {
    ServedFiles served(H2Servers::shared().www, "cli-nice");
    served.add("n.bin", 1'500'000, 700);
    TempDir work;
    writeFile(work.path() / "m.meta4", metalink(served.manifest({H2Servers::shared().quirksBase()})));
    const auto r = fetch(quote((work.path() / "m.meta4").string()) + " --nice --max-rate 8M --json --dir " +
                         quote((work.path() / "out").string()));
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(readBytes(work.path() / "out/n.bin") == served.content(0));
}

TEST_CASE("nicer fetch: Ctrl-C stops with exit 1 and keeps the part file for the next run", "[cli][resume]") {
    ServedFiles served(H2Servers::shared().www, "cli-interrupt");
    served.add("i.bin", 4 << 20, 800);
    TempDir work;
    const auto out = work.path() / "out";
    writeFile(work.path() / "m.meta4", metalink(served.manifest({H2Servers::shared().quirksBase()})));
    const pid_t pid =
        spawnFetch({(work.path() / "m.meta4").string(), "--dir", out.string(), "--max-rate", "1M"},
                   work.path() / "run.log");
    REQUIRE(pid > 0);
    // Interrupted mid-transfer: once the part file holds some bytes (at 1 MB/s, 4 MiB take seconds).
    REQUIRE(nicer::test::pollUntil(
        [&] {
            std::error_code error;
            const auto size = std::filesystem::file_size(out / "i.bin.part", error);
            return !error && size > 0;
        },
        20s, 20ms));
    REQUIRE(::kill(pid, SIGINT) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK_THAT(readBytes(work.path() / "run.log"),
               Catch::Contains("interrupted") && Catch::Contains("resume"));
    CHECK_FALSE(std::filesystem::exists(out / "i.bin"));
    REQUIRE(std::filesystem::exists(out / "i.bin.part"));
    const auto kept = std::filesystem::file_size(out / "i.bin.part");
    CHECK(kept > 0);
    CHECK(readBytes(out / "i.bin.part") == served.content(0).substr(0, kept));
}

TEST_CASE("nicer fetch survives kill -9 at random moments: no corrupt file, nothing fetched twice",
          "[cli][resume][kill]") {
    ServedFiles served(H2Servers::shared().www, "cli-kill");
    std::random_device device;
    const auto seed = device();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::uint64_t total = 0;
    for (int i = 0; i < 12; ++i) {
        // At least 12 MB in all, more than the killed runs can fetch at 2 MiB/s in their 4.8 s at most.
        const std::size_t size = std::uniform_int_distribution<std::size_t>(1'000'000, 3'000'000)(rng);
        served.add("k" + std::to_string(i) + ".bin", size, seed + i);
        total += size;
    }
    TempDir work;
    const auto out = work.path() / "out";
    writeFile(work.path() / "m.meta4", metalink(served.manifest({H2Servers::shared().quirksBase()})));
    const std::vector<std::string> arguments{(work.path() / "m.meta4").string(),
                                             "--dir",
                                             out.string(),
                                             "--max-rate",
                                             "2M",
                                             "--streams",
                                             "4",
                                             "--json"};

    std::vector<std::map<std::string, std::uint64_t>> partsAtStart;
    int kills = 0;
    for (int round = 0; round < 4; ++round) {
        partsAtStart.push_back(partSizes(out));
        const pid_t pid = spawnFetch(arguments, work.path() / ("run" + std::to_string(round) + ".log"));
        REQUIRE(pid > 0);
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(300, 1200)(rng)));
        REQUIRE(::kill(pid, SIGKILL) == 0);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        REQUIRE(WIFSIGNALED(status)); // it did not finish before the kill: the test must kill mid-transfer
        ++kills;
        // Whatever carries a final name is whole and correct.
        for (std::size_t i = 0; i < served.size(); ++i) {
            const auto path = out / served.name(i);
            if (std::filesystem::exists(path)) {
                INFO(served.name(i) << " after kill " << kills);
                CHECK(readBytes(path) == served.content(i));
            }
        }
    }

    partsAtStart.push_back(partSizes(out));
    const auto last = partsAtStart.back();
    std::size_t partsBeforeLast = 0;
    for (const auto& [name, size] : last) {
        partsBeforeLast += size > 0;
    }
    CHECK(partsBeforeLast > 0); // otherwise the kills proved nothing
    const auto r = fetch(quote(arguments[0]) + " --dir " + quote(out.string()) + " --max-rate 8M --json");
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    const auto summary = nlohmann::json::parse(r.out);
    for (const auto& file : summary["files"]) {
        const std::string name = file["name"];
        INFO(name);
        CHECK((file["state"] == "ok" || file["state"] == "already-present"));
        if (const auto it = last.find(name); it != last.end() && it->second > 0) {
            CHECK(file["resumedFrom"] == it->second);
            CHECK(file["bytesDownloaded"].get<std::uint64_t>() ==
                  file["size"].get<std::uint64_t>() - it->second);
        }
    }
    CHECK(summary["totals"]["rangeIgnored"] == 0);
    CHECK(summary["totals"]["hashMismatches"] == 0);
    for (std::size_t i = 0; i < served.size(); ++i) {
        CHECK(readBytes(out / served.name(i)) == served.content(i));
    }
    CHECK(partFiles(out).empty());

    // nginx's view: one TCP connection per run, and every run asked for each file from exactly where its
    // part file ended: no file was ever downloaded again from its start.
    const std::string prefix = "/" + served.dir().filename().string() + "/";
    const auto log = readNginxLog(H2Servers::shared().get("H2_NGINX_QUIRKS_LOG"), prefix);
    std::set<std::uint64_t> connectionSet;
    std::uint64_t sent = 0;
    for (const auto& entry : log) {
        connectionSet.insert(entry.connection);
        sent += entry.bytesSent;
    }
    const std::vector<std::uint64_t> connections(connectionSet.begin(), connectionSet.end());
    REQUIRE(connections.size() == partsAtStart.size());
    for (std::size_t run = 0; run < connections.size(); ++run) {
        std::map<std::string, NginxLogEntry> first; // each file's first request in this run
        for (const auto& entry : log) {
            const std::string name = entry.uri.substr(prefix.size());
            if (entry.connection == connections[run] &&
                (!first.contains(name) || entry.request < first[name].request)) {
                first[name] = entry;
            }
        }
        for (const auto& [name, entry] : first) {
            INFO("run " << run << ", " << name);
            const auto part = partsAtStart[run].find(name);
            const std::uint64_t resumeAt = part == partsAtStart[run].end() ? 0 : part->second;
            CHECK(entry.range == (resumeAt > 0 ? "bytes=" + std::to_string(resumeAt) + "-" : std::string()));
        }
    }
    // What the server sent beyond the files' size is only what was in flight at each kill: the windows at
    // 2 MiB/s are ~0.2 MiB.
    CHECK(sent <= total + static_cast<std::uint64_t>(kills) * (1u << 20));
}
