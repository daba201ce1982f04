#include "kernel/CgroupLayout.h"

#include "util/Text.h"
#include "util/TextFile.h"
#include "util/UniqueFd.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace nicer::kernel {

namespace {

namespace fs = std::filesystem;
using text::parseNumber;
using text::split;
using text::trim;

constexpr std::uint64_t kUSecPerSec = 1'000'000;
// The kernel takes CFS periods of 1 ms to 1 s (cpu.max, cpu.cfs_period_us); a longer one is no kernel's file.
constexpr std::uint64_t kMaxPeriodUSec = 1'000'000;

std::string errnoText(int error) {
    return std::generic_category().message(error);
}

Result<void> writeFile(const fs::path& path, std::string_view text) {
    const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        return Error{"cannot open " + path.string() + " for writing: " + errnoText(errno)};
    }
    // Kernel interface files take the whole value in one write; a short write would be an error there.
    const auto n = ::write(fd.get(), text.data(), text.size());
    if (n < 0) {
        return Error{"cannot write '" + std::string(text.substr(0, text.find('\n'))) + "' to " +
                     path.string() + ": " + errnoText(errno)};
    }
    return {};
}

std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    for (auto part : split(s, ' ')) {
        if (!part.empty()) {
            out.push_back(part);
        }
    }
    return out;
}

/// Mount points in mountinfo escape space, tab, newline and backslash as \ooo (octal).
std::string unescapeOctal(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            const auto digits = s.substr(i + 1, 3);
            if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
                out += static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

/// quota/period in µs of CPU per second of wall time (rounded down), for a period of at most a second;
/// UINT64_MAX, no limit, for a quota of more CPUs than that counts (18 million).
std::uint64_t perSecond(std::uint64_t quota, std::uint64_t period) {
    const std::uint64_t whole = quota / period;
    const std::uint64_t part = quota % period * kUSecPerSec / period; // below 10^12 before the division
    if (whole > (UINT64_MAX - 1 - part) / kUSecPerSec) {
        return UINT64_MAX;
    }
    return whole * kUSecPerSec + part;
}

/// Appends the PIDs listed in one cgroup.procs; a cgroup that vanished meanwhile counts as empty.
Result<void> appendProcs(const fs::path& dir, std::vector<pid_t>& pids, bool mustExist) {
    const auto file = dir / "cgroup.procs";
    auto text = readTextFile(file);
    if (!text) {
        std::error_code ec;
        if (!mustExist && !fs::exists(file, ec)) {
            return {};
        }
        return text.error();
    }
    for (auto line : split(*text, '\n')) {
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        pid_t pid = 0;
        if (!parseNumber(line, pid) || pid <= 0) {
            return Error{file.string() + ": '" + std::string(line) + "' is not a PID"};
        }
        pids.push_back(pid);
    }
    return {};
}

} // namespace

Result<std::uint64_t> readStatField(const std::filesystem::path& file, std::string_view key) {
    auto text = readTextFile(file);
    if (!text) {
        return text.error();
    }
    for (auto line : split(*text, '\n')) {
        const auto fields = words(trim(line));
        if (fields.size() == 2 && fields[0] == key) {
            std::uint64_t value = 0;
            if (!parseNumber(fields[1], value)) {
                return Error{file.string() + ": " + std::string(key) + " '" + std::string(fields[1]) +
                             "' is not a number"};
            }
            return value;
        }
    }
    return Error{file.string() + " has no " + std::string(key) + " line"};
}

Result<CgroupLayout> CgroupLayout::parse(std::string_view mountinfo) {
    CgroupLayout layout;
    bool unifiedIsHybrid = false;
    std::size_t lineNo = 0;
    for (auto line : split(mountinfo, '\n')) {
        ++lineNo;
        if (trim(line).empty()) {
            continue;
        }
        const auto fields = words(line);
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        const auto separator = std::find(fields.begin() + std::min<std::size_t>(fields.size(), 6),
                                         fields.end(), std::string_view("-"));
        if (fields.size() < 6 || separator == fields.end() || fields.end() - separator < 3) {
            return Error{"mountinfo line " + std::to_string(lineNo) +
                         " is not 'ID PARENT MAJ:MIN ROOT MOUNTPOINT " +
                         "OPTIONS... - FSTYPE SOURCE SUPEROPTIONS': '" + std::string(line) + "'"};
        }
        const auto fsType = *(separator + 1);
        const fs::path mountPoint = unescapeOctal(fields[4]);
        // The first mount of a hierarchy wins: later ones are bind mounts of subtrees (containers).
        if (fsType == "cgroup2") {
            if (!layout.m_unified) {
                layout.m_unified = mountPoint;
                unifiedIsHybrid = mountPoint.filename() == "unified";
            }
        } else if (fsType == "cgroup") {
            const auto superOptions = separator + 3 < fields.end() ? *(separator + 3) : std::string_view();
            for (const auto option : split(superOptions, ',')) {
                if (option == "cpu" && !layout.m_cpu) {
                    layout.m_cpu = mountPoint;
                } else if (option == "cpuacct" && !layout.m_cpuacct) {
                    layout.m_cpuacct = mountPoint;
                } else if (option == "freezer" && !layout.m_freezer) {
                    layout.m_freezer = mountPoint;
                } else if (option == "memory" && !layout.m_memory) {
                    layout.m_memory = mountPoint;
                } else if (option == "name=systemd" && !layout.m_systemd) {
                    layout.m_systemd = mountPoint;
                }
            }
        }
    }
    if (!layout.m_unified && !layout.m_cpu && !layout.m_cpuacct && !layout.m_freezer && !layout.m_systemd) {
        return Error{"no cgroup file system is mounted (mountinfo lists neither cgroup2 nor a cgroup v1 "
                     "hierarchy nicer uses); mount cgroup2 at /sys/fs/cgroup"};
    }
    // A controller lives on one hierarchy only: on v2 unless a v1 hierarchy holds it. The text cannot tell
    // whether the kernel offers cpu on v2 at all; detect() checks cgroup.controllers for that.
    layout.m_cpuOnUnified = layout.m_unified && !unifiedIsHybrid && !layout.m_cpu;
    return layout;
}

Result<CgroupLayout> CgroupLayout::detect(const std::string& path) {
    auto text = readTextFile(path);
    if (!text) {
        return text.error();
    }
    auto layout = parse(*text);
    if (!layout || !layout->m_cpuOnUnified) {
        return layout;
    }
    if (auto controllers = readTextFile(*layout->m_unified / "cgroup.controllers"); controllers) {
        const auto names = words(trim(*controllers));
        layout->m_cpuOnUnified = std::find(names.begin(), names.end(), "cpu") != names.end();
    }
    return layout;
}

namespace {

/// "/a/b" relative to a hierarchy's mount point (operator/ would drop the root for an absolute path).
fs::path under(const fs::path& root, std::string_view cgroup) {
    while (!cgroup.empty() && cgroup.front() == '/') {
        cgroup.remove_prefix(1);
    }
    return cgroup.empty() ? root : root / cgroup;
}

std::optional<fs::path> existing(fs::path path) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
        return path;
    }
    return std::nullopt;
}

} // namespace

std::optional<std::filesystem::path> CgroupLayout::cpuControllerFile(std::string_view cgroup,
                                                                     std::string_view v2Name,
                                                                     std::string_view v1Name) const {
    if (m_cpuOnUnified && m_unified) {
        return under(*m_unified, cgroup) / v2Name;
    }
    if (m_cpu) {
        return under(*m_cpu, cgroup) / v1Name;
    }
    return std::nullopt;
}

std::optional<std::filesystem::path> CgroupLayout::cpuQuotaFile(std::string_view cgroup) const {
    const auto file = cpuControllerFile(cgroup, "cpu.max", "cpu.cfs_quota_us");
    return file ? existing(*file) : std::nullopt;
}

Result<std::uint64_t> CgroupLayout::readCpuQuotaPerSecUSec(std::string_view cgroup) const {
    const auto file = cpuQuotaFile(cgroup);
    if (!file) {
        const auto wanted = cpuControllerFile(cgroup, "cpu.max", "cpu.cfs_quota_us");
        const std::string where = wanted ? wanted->string() : "a cpu controller hierarchy";
        return Error{"no CPU limit for cgroup " + std::string(cgroup) + ": " + where +
                     " does not exist (is the cgroup gone, or the cpu controller not enabled for it?)"};
    }
    auto text = readTextFile(*file);
    if (!text) {
        return text.error();
    }

    if (file->filename() == "cpu.max") {
        // "max 100000" or "<quota> <period>", both in µs.
        const auto fields = words(trim(*text));
        std::uint64_t period = 0;
        if (fields.size() != 2 || !parseNumber(fields[1], period) || period == 0 || period > kMaxPeriodUSec) {
            return Error{file->string() +
                         ": expected '<quota|max> <period>' with a period of at most 1 s, got '" +
                         std::string(trim(*text)) + "'"};
        }
        if (fields[0] == "max") {
            return UINT64_MAX;
        }
        std::uint64_t quota = 0;
        if (!parseNumber(fields[0], quota)) {
            return Error{file->string() + ": quota '" + std::string(fields[0]) +
                         "' is neither a number nor 'max'"};
        }
        return perSecond(quota, period);
    }

    // v1: cpu.cfs_quota_us is -1 for no limit; the period is in the file next to it.
    std::int64_t quota = 0;
    if (!parseNumber(trim(*text), quota) || quota < -1) {
        return Error{file->string() + ": expected a number of µs or -1, got '" + std::string(trim(*text)) +
                     "'"};
    }
    if (quota == -1) {
        return UINT64_MAX;
    }
    const auto periodFile = file->parent_path() / "cpu.cfs_period_us";
    auto periodText = readTextFile(periodFile);
    if (!periodText) {
        return periodText.error();
    }
    std::uint64_t period = 0;
    if (!parseNumber(trim(*periodText), period) || period == 0 || period > kMaxPeriodUSec) {
        return Error{periodFile.string() + ": expected a period in µs of at most 1 s, got '" +
                     std::string(trim(*periodText)) + "'"};
    }
    return perSecond(static_cast<std::uint64_t>(quota), period);
}

Result<std::uint64_t> CgroupLayout::readCpuUsageNSec(std::string_view cgroup) const {
    // cpu.stat's usage_usec exists on the v2 tree even without the cpu controller (and on hybrid).
    if (m_unified) {
        if (const auto file = existing(under(*m_unified, cgroup) / "cpu.stat")) {
            auto usec = readStatField(*file, "usage_usec");
            if (!usec) {
                return usec.error();
            }
            // In ns it must fit in 64 bits (584 years of CPU) rather than wrap to a small count.
            if (*usec > UINT64_MAX / 1000) {
                return Error{file->string() + ": usage_usec " + std::to_string(*usec) + " is out of range"};
            }
            return *usec * 1000;
        }
    }
    if (m_cpuacct) {
        if (const auto file = existing(under(*m_cpuacct, cgroup) / "cpuacct.usage")) {
            auto text = readTextFile(*file);
            if (!text) {
                return text.error();
            }
            std::uint64_t nsec = 0;
            if (!parseNumber(trim(*text), nsec)) {
                return Error{file->string() + ": expected nanoseconds, got '" + std::string(trim(*text)) +
                             "'"};
            }
            return nsec;
        }
    }
    return Error{"no CPU usage for cgroup " + std::string(cgroup) +
                 ": neither cpu.stat (cgroup v2) nor cpuacct.usage (v1) exists for it (is the cgroup gone?)"};
}

Result<bool> CgroupLayout::readCpuIdle(std::string_view cgroup) const {
    const auto wanted = cpuControllerFile(cgroup, "cpu.idle", "cpu.idle");
    const auto file = wanted ? existing(*wanted) : std::nullopt;
    if (!file) {
        return false;
    }
    auto text = readTextFile(*file);
    if (!text) {
        return text.error();
    }
    const auto value = trim(*text);
    if (value != "0" && value != "1") {
        return Error{file->string() + ": expected 0 or 1, got '" + std::string(value) + "'"};
    }
    return value == "1";
}

Result<std::uint64_t> CgroupLayout::readBandwidthWindows(std::string_view cgroup) const {
    // cpu.stat of the cpu controller's hierarchy: nr_periods is there on v2 and on v1 alike.
    const auto stat = cpuControllerFile(cgroup, "cpu.stat", "cpu.stat");
    const auto file = stat ? existing(*stat) : std::nullopt;
    if (!file) {
        return Error{"no CPU bandwidth statistics for cgroup " + std::string(cgroup) +
                     ": its cpu.stat does not exist in the cpu controller's hierarchy (is the cgroup gone?)"};
    }
    return readStatField(*file, "nr_periods");
}

std::optional<std::filesystem::path> CgroupLayout::freezeFile(std::string_view cgroup) const {
    if (!m_unified) {
        return std::nullopt;
    }
    return existing(under(*m_unified, cgroup) / "cgroup.freeze");
}

Result<void> CgroupLayout::setFrozen(std::string_view cgroup, bool frozen) const {
    const auto file = freezeFile(cgroup);
    if (!file) {
        return Error{"cannot " + std::string(frozen ? "freeze" : "thaw") + " cgroup " + std::string(cgroup) +
                     ": it has no cgroup.freeze (needs a cgroup v2 tree and Linux 5.2 or later)"};
    }
    return writeFile(*file, frozen ? "1\n" : "0\n");
}

Result<std::vector<std::string>> CgroupLayout::readControllers(std::string_view cgroup) const {
    if (!m_unified) {
        return Error{"cannot read the controllers of cgroup " + std::string(cgroup) + ": no cgroup v2 tree"};
    }
    auto text = readTextFile(under(*m_unified, cgroup) / "cgroup.controllers");
    if (!text) {
        return text.error();
    }
    std::vector<std::string> names;
    for (const auto name : words(trim(*text))) {
        names.emplace_back(name);
    }
    return names;
}

bool CgroupLayout::memoryControllerAvailable(std::string_view cgroup) const {
    const std::string parent = fs::path(cgroup).parent_path().string();
    if (m_memory) {
        return ::access(under(*m_memory, parent).c_str(), W_OK) == 0;
    }
    auto controllers = readControllers(parent);
    return controllers && std::find(controllers->begin(), controllers->end(), "memory") != controllers->end();
}

std::string CgroupLayout::userManagerCgroup(std::string_view cgroup) {
    // The deepest "user@UID.service" component: the user manager's own cgroup, whose controllers are those
    // systemd delegated to it (Delegate= of user@.service).
    std::size_t end = std::string_view::npos;
    for (std::size_t start = 0; start < cgroup.size();) {
        const std::size_t slash = cgroup.find('/', start + 1);
        const std::size_t stop = slash == std::string_view::npos ? cgroup.size() : slash;
        const std::string_view component = cgroup.substr(start + 1, stop - start - 1);
        if (component.starts_with("user@") && component.ends_with(".service")) {
            end = stop;
        }
        start = stop;
    }
    return end == std::string_view::npos ? std::string() : std::string(cgroup.substr(0, end));
}

Result<std::vector<pid_t>> CgroupLayout::readPids(std::string_view cgroup) const {
    // The v2 tree holds every process even on hybrid; pure v1 tracks them in name=systemd.
    std::optional<fs::path> base;
    std::error_code ec;
    for (const auto* root : {&m_unified, &m_systemd}) {
        if (*root && fs::is_directory(under(**root, cgroup), ec)) {
            base = under(**root, cgroup);
            break;
        }
    }
    if (!base) {
        return Error{"cannot list the processes of cgroup " + std::string(cgroup) +
                     ": no such cgroup in the v2 or name=systemd hierarchy"};
    }

    std::vector<pid_t> pids;
    if (auto read = appendProcs(*base, pids, true); !read) {
        return read.error();
    }
    // Explicit stack instead of recursive_directory_iterator: a child cgroup that vanishes mid-walk must
    // not end the walk for its siblings.
    std::vector<fs::path> pending{*base};
    while (!pending.empty()) {
        const auto dir = std::move(pending.back());
        pending.pop_back();
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code typeEc;
            if (!it->is_directory(typeEc) || it->is_symlink(typeEc)) {
                continue;
            }
            if (auto read = appendProcs(it->path(), pids, false); !read) {
                return read.error();
            }
            pending.push_back(it->path());
        }
        ec.clear();
    }
    // v1's cgroup.procs may repeat a PID.
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    return pids;
}

Result<int> CgroupLayout::signalAll(std::string_view cgroup, int signal) const {
    auto pids = readPids(cgroup);
    if (!pids) {
        return pids.error();
    }
    for (const pid_t pid : *pids) {
        ::kill(pid, signal);
    }
    return static_cast<int>(pids->size());
}

} // namespace nicer::kernel
