// The cgroup files CgroupLayout reads: cpu.max, cpu.cfs_quota_us and cpu.cfs_period_us, cpu.stat (v2 and v1),
// cpuacct.usage and cgroup.procs, with contents from the input, in a scratch tree mounted as pure v2, pure
// v1 or hybrid. A value read is the one the file states (the quota per second exactly, or "none"), and the
// PIDs are positive, sorted, without repeats, and each listed in one of the files.

#include "FuzzSupport.h"
#include "kernel/CgroupLayout.h"
#include "util/Text.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <fuzzer/FuzzedDataProvider.h>
#include <set>
#include <string>
#include <vector>

using namespace nicer;
namespace fs = std::filesystem;

namespace {

const fs::path& scratch() {
    static const fs::path dir = [] {
        // $TMPDIR when set: run.sh points it into its work directory, which it removes, since libFuzzer often
        // ends without running atexit(). Else memory where there is a tmpfs: six times a disk's executions.
        std::error_code ec;
        const char* tmpdir = std::getenv("TMPDIR");
        const fs::path tmp = tmpdir != nullptr && *tmpdir != '\0' ? fs::path(tmpdir)
                             : fs::is_directory("/dev/shm", ec)   ? fs::path("/dev/shm")
                                                                  : fs::path("/tmp");
        std::string pattern = (tmp / "nicer-fuzz-cgroup-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::abort();
        }
        const fs::path root = pattern;
        for (const char* hierarchy : {"v2", "unified", "cpu", "cpuacct", "systemd"}) {
            fs::create_directories(root / hierarchy / "child");
        }
        std::atexit([] { fs::remove_all(scratch()); });
        return root;
    }();
    return dir;
}

/// Writes @p text to @p path, or removes the file when @p present is false.
void put(const fs::path& path, bool present, const std::string& text) {
    if (!present) {
        fs::remove(path);
        return;
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string_view> words(std::string_view text) {
    std::vector<std::string_view> out;
    for (const auto word : text::split(text::trim(text), ' ')) {
        if (!word.empty()) {
            out.push_back(word);
        }
    }
    return out;
}

/// quota/period in µs per second, exactly, or nullopt when that does not fit below UINT64_MAX.
std::optional<std::uint64_t> perSecond(std::uint64_t quota, std::uint64_t period) {
    const unsigned __int128 exact = static_cast<unsigned __int128>(quota) * 1'000'000u / period;
    if (exact >= UINT64_MAX) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(exact);
}

/// A quota read is the one cpu.max (v2) or cpu.cfs_quota_us and cpu.cfs_period_us (v1) state, per second of
/// wall time, exactly; "none" (UINT64_MAX) for max, -1, or a quota too large to count. The kernel's periods
/// are at most a second.
void checkQuota(const Result<std::uint64_t>& read, bool v2, const std::string& cpuMax,
                const std::string& quotaUs, const std::string& periodUs) {
    if (!read) {
        return;
    }
    std::uint64_t expected = 0;
    if (v2) {
        const auto fields = words(cpuMax);
        std::uint64_t period = 0;
        FUZZ_CHECK(fields.size() == 2 && text::parseNumber(fields[1], period) && period > 0 &&
                   period <= 1'000'000);
        std::uint64_t quota = 0;
        if (fields[0] == "max") {
            expected = UINT64_MAX;
        } else {
            FUZZ_CHECK(text::parseNumber(fields[0], quota));
            expected = perSecond(quota, period).value_or(UINT64_MAX);
        }
    } else {
        std::int64_t quota = 0;
        FUZZ_CHECK(text::parseNumber(text::trim(quotaUs), quota) && quota >= -1);
        if (quota == -1) {
            expected = UINT64_MAX;
        } else {
            std::uint64_t period = 0;
            FUZZ_CHECK(text::parseNumber(text::trim(periodUs), period) && period > 0 && period <= 1'000'000);
            expected = perSecond(static_cast<std::uint64_t>(quota), period).value_or(UINT64_MAX);
        }
    }
    FUZZ_CHECK(*read == expected);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const fs::path& root = scratch();
    // 0: pure v2; 1: pure v1; 2: hybrid (v1 cpu and cpuacct, the v2 tree as "unified").
    const int kind = input.ConsumeIntegralInRange(0, 2);
    const bool hasV2 = kind != 1;
    const bool hasV1 = kind != 0;
    const fs::path v2 = root / (kind == 0 ? "v2" : "unified");

    const std::string cpuMax = input.ConsumeRandomLengthString(64);
    const std::string cpuStat = input.ConsumeRandomLengthString(256);
    const std::string quotaUs = input.ConsumeRandomLengthString(32);
    const std::string periodUs = input.ConsumeRandomLengthString(32);
    const std::string usage = input.ConsumeRandomLengthString(32);
    const std::string procs = input.ConsumeRandomLengthString(128);
    const std::string childProcs = input.ConsumeRandomLengthString(128);
    const bool childPresent = input.ConsumeBool();
    const std::string v1CpuStat = input.ConsumeRandomLengthString(128); // the v1 cpu hierarchy's cpu.stat

    std::string mountinfo;
    if (hasV2) {
        mountinfo += "30 1 0:26 / " + v2.string() + " rw - cgroup2 cgroup2 rw,nsdelegate\n";
    }
    if (hasV1) {
        mountinfo += "31 1 0:27 / " + (root / "cpu").string() + " rw - cgroup cgroup rw,cpu\n";
        mountinfo += "32 1 0:28 / " + (root / "cpuacct").string() + " rw - cgroup cgroup rw,cpuacct\n";
        mountinfo += "33 1 0:29 / " + (root / "systemd").string() + " rw - cgroup cgroup rw,name=systemd\n";
    }
    const auto layout = kernel::CgroupLayout::parse(mountinfo);
    FUZZ_CHECK(layout.ok());

    const fs::path pidsDir = hasV2 ? v2 : root / "systemd";
    put(v2 / "cpu.max", kind == 0, cpuMax);
    put(v2 / "cpu.stat", hasV2, cpuStat);
    put(root / "cpu" / "cpu.cfs_quota_us", hasV1, quotaUs);
    put(root / "cpu" / "cpu.cfs_period_us", hasV1, periodUs);
    put(root / "cpu" / "cpu.stat", hasV1, v1CpuStat);
    put(root / "cpuacct" / "cpuacct.usage", hasV1, usage);
    put(pidsDir / "cgroup.procs", true, procs);
    put(pidsDir / "child" / "cgroup.procs", childPresent, childProcs);

    checkQuota(layout->readCpuQuotaPerSecUSec("/"), layout->cpuOnUnified(), cpuMax, quotaUs, periodUs);

    if (const auto nsec = layout->readCpuUsageNSec("/")) {
        if (hasV2) {
            // The first usage_usec line, in ns: exactly, so never one that does not fit in 64 bits.
            std::optional<std::uint64_t> usec;
            for (const auto line : text::split(cpuStat, '\n')) {
                const auto fields = words(line);
                if (!usec && fields.size() == 2 && fields[0] == "usage_usec") {
                    usec.emplace();
                    FUZZ_CHECK(text::parseNumber(fields[1], *usec));
                }
            }
            FUZZ_CHECK(usec.has_value());
            FUZZ_CHECK(*usec <= UINT64_MAX / 1000 && *nsec == *usec * 1000);
        } else {
            std::uint64_t expected = 0;
            FUZZ_CHECK(text::parseNumber(text::trim(usage), expected) && *nsec == expected);
        }
    }

    if (const auto windows = layout->readBandwidthWindows("/")) {
        // The first nr_periods line of the cpu controller's cpu.stat: v2's where the controller is there,
        // else v1's.
        std::optional<std::uint64_t> expected;
        for (const auto line : text::split(layout->cpuOnUnified() ? cpuStat : v1CpuStat, '\n')) {
            const auto fields = words(line);
            if (!expected && fields.size() == 2 && fields[0] == "nr_periods") {
                expected.emplace();
                FUZZ_CHECK(text::parseNumber(fields[1], *expected));
            }
        }
        FUZZ_CHECK(expected.has_value() && *windows == *expected);
    }

    if (const auto pids = layout->readPids("/")) {
        std::set<pid_t> listed;
        for (const auto* text : {&procs, &childProcs}) {
            if (text == &childProcs && !childPresent) {
                continue;
            }
            for (const auto line : text::split(*text, '\n')) {
                pid_t pid = 0;
                if (text::parseNumber(text::trim(line), pid)) {
                    listed.insert(pid);
                }
            }
        }
        FUZZ_CHECK(std::is_sorted(pids->begin(), pids->end()));
        FUZZ_CHECK(std::adjacent_find(pids->begin(), pids->end()) == pids->end());
        for (const pid_t pid : *pids) {
            FUZZ_CHECK(pid > 0 && listed.count(pid) == 1);
        }
        FUZZ_CHECK(pids->size() == listed.size());
    }
    return 0;
}
