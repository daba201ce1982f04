#include "Poll.h"
#include "cpu/CpuSampler.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace nicer::cpu;

namespace {

std::string fixture(const std::string& name) {
    return std::string(NICER_TEST_DATA) + "/procstat/" + name;
}

/// A /proc/stat stand-in whose content the test replaces between samples.
class FakeProcStat {
public:
    FakeProcStat()
        : m_path(std::filesystem::temp_directory_path() / ("nicer-procstat-" + std::to_string(::getpid()))) {}
    ~FakeProcStat() { std::filesystem::remove(m_path); }
    void copyFrom(const std::string& fixtureName) {
        std::filesystem::copy_file(fixture(fixtureName), m_path,
                                   std::filesystem::copy_options::overwrite_existing);
    }
    std::string path() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

} // namespace

TEST_CASE("the sampler measures each period from the previous read", "[sampler]") {
    FakeProcStat stat;
    stat.copyFrom("four-cpus-t0.txt");
    CpuSampler sampler(stat.path());
    REQUIRE(sampler.prime().ok());

    stat.copyFrom("four-cpus-t1.txt");
    auto first = sampler.sample();
    REQUIRE(first.ok());
    CHECK(first->idle == Approx(215.0 / 400.0));

    // No time passes: no usable sample, and the reference stays at t1.
    auto none = sampler.sample();
    REQUIRE(none.ok());
    CHECK(none->totalTicks == 0);
}

TEST_CASE("a sampler on a file that vanishes or turns bad reports the error", "[sampler]") {
    FakeProcStat stat;
    stat.copyFrom("four-cpus-t0.txt");
    CpuSampler sampler(stat.path());
    REQUIRE(sampler.prime().ok());
    stat.copyFrom("malformed-non-numeric.txt");
    const auto bad = sampler.sample();
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains(":3:"));
}

TEST_CASE("sampling the live machine gives the share of the ticks that passed", "[sampler]") {
    const auto start = std::chrono::steady_clock::now();
    CpuSampler sampler;
    REQUIRE(sampler.prime().ok());
    nicer::Result<CpuUsage> usage = nicer::Error{"not sampled"};
    // Until at least one tick has passed.
    REQUIRE(nicer::test::pollUntil(
        [&] {
            usage = sampler.sample();
            REQUIRE(usage.ok());
            return usage->totalTicks > 0;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(20)));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    CHECK(usage->idle >= 0.0);
    CHECK(usage->idle <= 1.0);
    // idle is a count of ticks over the total, so it gives back a whole number of them.
    const double idleTicks = usage->idle * static_cast<double>(usage->totalTicks);
    CHECK(idleTicks == Approx(std::round(idleTicks)).margin(1e-6));
    // The ticks come from the CPUs online, each counting USER_HZ a second (a tick of slack per CPU at
    // each end of the period).
    CHECK(usage->cpuCount == sysconf(_SC_NPROCESSORS_ONLN));
    const double ticksPerCpu = elapsed * static_cast<double>(sysconf(_SC_CLK_TCK)) + 2.0;
    CHECK(static_cast<double>(usage->totalTicks) <= ticksPerCpu * usage->cpuCount);
}
