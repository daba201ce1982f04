#include "net/FetcherTestSupport.h"
#include "net/fetch/ResumeInspector.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

using namespace nicer;
using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

const ResumeInspector::Clock::time_point kNow = ResumeInspector::Clock::time_point(1h);

FileDownload makeDownload(const std::filesystem::path& dir, const std::string& name,
                          const std::string& content, bool withHash = true) {
    MetalinkFile file;
    file.name = name;
    file.size = content.size();
    file.sha256 = withHash ? nicer::test::sha256Of(content) : std::string();
    file.mirrors.push_back(Mirror{"http://a.example/" + name});
    return FileDownload(0, file, dir / name, {*parseUrl("http://a.example/" + name)},
                        Backoff(100ms, 1s, [] { return 0.5; }), FileDownload::Policy{dir, 2, 3});
}

// Runs the inspector to the end with @p budget bytes per turn; the number of turns.
int runAll(ResumeInspector& inspector, std::uint64_t budget) {
    int turns = 1;
    while (inspector.run(budget, kNow)) {
        ++turns;
        REQUIRE(turns < 10'000);
    }
    return turns;
}

} // namespace

TEST_CASE("a file with nothing on disk is queued at once") {
    nicer::test::TempDir dir;
    auto download = makeDownload(dir.path(), "a.bin", "hello");
    std::vector<FileDownload*> done;
    ResumeInspector inspector(dir.path(), [&](FileDownload& d) { done.push_back(&d); });
    inspector.add(download);
    CHECK(download.state() == FileState::Checking);
    CHECK_FALSE(inspector.run(1 << 20, kNow));
    CHECK(download.state() == FileState::Queued);
    CHECK(download.offset == 0);
    CHECK(done.empty());
    CHECK(inspector.empty());
}

TEST_CASE("a finished file that verifies is already present, hashed a budget at a time") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(10'000, 1);
    nicer::test::writeFile(dir.path() / "a.bin", content);
    auto download = makeDownload(dir.path(), "a.bin", content);
    std::vector<FileDownload*> done;
    ResumeInspector inspector(dir.path(), [&](FileDownload& d) { done.push_back(&d); });
    inspector.add(download);
    CHECK(runAll(inspector, 1000) >= 10);
    CHECK(download.state() == FileState::AlreadyPresent);
    CHECK(download.report.bytesDone == 10'000);
    REQUIRE(done.size() == 1);
    CHECK(done[0] == &download);
}

TEST_CASE("a part file is hashed so the download resumes where it ends") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(10'000, 2);
    nicer::test::writeFile(dir.path() / "a.bin.part", content.substr(0, 6000));
    auto download = makeDownload(dir.path(), "a.bin", content);
    ResumeInspector inspector(dir.path(), {});
    inspector.add(download);
    runAll(inspector, 4096);
    CHECK(download.state() == FileState::Queued);
    CHECK(download.offset == 6000);
    CHECK(download.report.bytesDone == 6000);
    CHECK(download.hash.hexDigestSoFar() == nicer::test::sha256Of(content.substr(0, 6000)));
    CHECK_FALSE(download.part); // closed until the attempt opens it
}

TEST_CASE("a finished file with other content is left alone and its part file is looked at instead") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(3000, 3);
    nicer::test::writeFile(dir.path() / "a.bin", nicer::test::randomBytes(3000, 4));
    nicer::test::writeFile(dir.path() / "a.bin.part", content.substr(0, 1000));
    auto download = makeDownload(dir.path(), "a.bin", content);
    ResumeInspector inspector(dir.path(), {});
    inspector.add(download);
    runAll(inspector, 1 << 20);
    CHECK(download.state() == FileState::Queued);
    CHECK(download.offset == 1000);
    CHECK(std::filesystem::exists(dir.path() / "a.bin"));
}

TEST_CASE("a part file longer than the file is discarded") {
    nicer::test::TempDir dir;
    nicer::test::writeFile(dir.path() / "a.bin.part", std::string(200, 'x'));
    auto download = makeDownload(dir.path(), "a.bin", std::string(100, 'y'));
    ResumeInspector inspector(dir.path(), {});
    inspector.add(download);
    runAll(inspector, 1 << 20);
    CHECK(download.state() == FileState::Queued);
    CHECK(download.offset == 0);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "a.bin.part"));
}

TEST_CASE("a whole part file that hashes wrong is discarded without counting an attempt") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(500, 5);
    nicer::test::writeFile(dir.path() / "a.bin.part", nicer::test::randomBytes(500, 6));
    auto download = makeDownload(dir.path(), "a.bin", content);
    ResumeInspector inspector(dir.path(), {});
    inspector.add(download);
    runAll(inspector, 1 << 20);
    CHECK(download.state() == FileState::Queued);
    CHECK(download.offset == 0);
    CHECK(download.counters.hashMismatches == 1);
    CHECK(download.report.attempts == 0);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "a.bin.part"));
}

TEST_CASE("a whole part file that verifies (killed before the rename) is finished without a request") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(700, 7);
    nicer::test::writeFile(dir.path() / "a.bin.part", content);
    auto download = makeDownload(dir.path(), "a.bin", content);
    int done = 0;
    ResumeInspector inspector(dir.path(), [&](FileDownload&) { ++done; });
    inspector.add(download);
    runAll(inspector, 1 << 20);
    CHECK(download.state() == FileState::Ok);
    CHECK(done == 1);
    CHECK(download.report.resumedFrom == 700);
    CHECK(nicer::test::readBytes(dir.path() / "a.bin") == content);
    CHECK(nicer::test::partFiles(dir.path()).empty());
}

TEST_CASE("files are inspected one after the other within the budget, clear() forgets them") {
    nicer::test::TempDir dir;
    const std::string a = nicer::test::randomBytes(3000, 8);
    const std::string b = nicer::test::randomBytes(3000, 9);
    nicer::test::writeFile(dir.path() / "a.bin.part", a.substr(0, 2000));
    nicer::test::writeFile(dir.path() / "b.bin.part", b.substr(0, 2000));
    auto first = makeDownload(dir.path(), "a.bin", a);
    auto second = makeDownload(dir.path(), "b.bin", b);
    ResumeInspector inspector(dir.path(), {});
    inspector.add(first);
    inspector.add(second);
    CHECK(inspector.run(2500, kNow));
    CHECK(first.state() == FileState::Queued);
    CHECK(second.state() == FileState::Checking);
    inspector.clear();
    CHECK(inspector.empty());
    CHECK_FALSE(inspector.run(1 << 20, kNow));
    CHECK(second.state() == FileState::Checking);
}
