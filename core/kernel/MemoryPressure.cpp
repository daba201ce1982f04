#include "kernel/MemoryPressure.h"

#include "kernel/CgroupLayout.h"
#include "util/Text.h"
#include "util/TextFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace nicer::kernel {

namespace {

/// total= of one line ("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234").
Result<std::uint64_t> lineTotal(std::string_view line) {
    for (auto field : text::split(line, ' ')) {
        std::uint64_t total = 0;
        if (field.starts_with("total=") && text::parseNumber(field.substr(6), total)) {
            return total;
        }
    }
    return Error{"no total= in '" + std::string(line) + "'"};
}

/// @p cgroup without its trailing slashes ("/" stays "/").
std::string withoutTrailingSlash(std::string_view cgroup) {
    std::string path(cgroup);
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    return path;
}

} // namespace

Result<PressureTotals> parsePressure(std::string_view text) {
    PressureTotals totals;
    bool some = false;
    for (auto line : text::split(text, '\n')) {
        line = text::trim(line);
        const bool isSome = line.starts_with("some ");
        if (!isSome && !line.starts_with("full ")) {
            continue;
        }
        auto total = lineTotal(line);
        if (!total) {
            return total.error();
        }
        (isSome ? totals.someUSec : totals.fullUSec) = *total;
        some = some || isSome;
    }
    if (!some) {
        return Error{"no 'some' line"};
    }
    return totals;
}

Result<PressureTotals> readPressure(const std::filesystem::path& file) {
    auto text = readTextFile(file);
    if (!text) {
        return text.error();
    }
    auto totals = parsePressure(*text);
    if (!totals) {
        return Error{file.string() + ": " + totals.error().message};
    }
    return totals;
}

Result<std::vector<std::string>> cgroupsBeside(const std::filesystem::path& unifiedRoot,
                                               std::string_view work) {
    std::string path = withoutTrailingSlash(work);
    if (!path.starts_with('/') || path.size() == 1) {
        return Error{"the work's cgroup '" + std::string(work) + "' is not below the root"};
    }
    std::vector<std::string> beside;
    while (path.size() > 1) {
        const auto cut = path.rfind('/');
        const std::string parent = path.substr(0, cut); // "" for the root
        const std::string own = path.substr(cut + 1);
        const auto dir = unifiedRoot / std::filesystem::path(parent).relative_path();
        std::error_code ec;
        std::filesystem::directory_iterator it(dir, ec);
        if (ec) {
            return Error{"cannot list " + dir.string() + ": " + ec.message()};
        }
        for (const auto& entry : it) {
            if (entry.is_directory(ec) && entry.path().filename() != own) {
                beside.push_back(parent + "/" + entry.path().filename().string());
            }
        }
        path = parent;
    }
    std::sort(beside.begin(), beside.end());
    return beside;
}

std::optional<std::uint64_t> readCgroupCount(const std::filesystem::path& file) {
    auto text = readTextFile(file);
    std::uint64_t value = 0;
    if (!text || !text::parseNumber(text::trim(*text), value)) {
        return std::nullopt;
    }
    return value;
}

std::optional<SharedLimit> tightestSharedLimit(const std::filesystem::path& unifiedRoot,
                                               std::string_view besideOf) {
    std::string path = withoutTrailingSlash(besideOf);
    std::optional<SharedLimit> tightest;
    while (path.size() > 1 && path.starts_with('/')) {
        path = path.substr(0, path.rfind('/'));
        if (path.empty()) {
            break; // the root has no limit
        }
        const auto dir = unifiedRoot / std::filesystem::path(path).relative_path();
        const auto max = readCgroupCount(dir / "memory.max");
        const auto high = readCgroupCount(dir / "memory.high");
        const auto current = readCgroupCount(dir / "memory.current");
        if ((!max && !high) || !current) {
            continue;
        }
        const std::uint64_t limit = std::min(max.value_or(UINT64_MAX), high.value_or(UINT64_MAX));
        // Its page cache not yet used again is what it reclaims first, as MemAvailable counts the machine's.
        const auto stat = readStatField(dir / "memory.stat", "inactive_file");
        const std::uint64_t cache = stat ? *stat : 0;
        const std::uint64_t available = (limit > *current ? limit - *current : 0) + std::min(cache, *current);
        if (!tightest || available < tightest->available) {
            tightest = SharedLimit{path, limit, std::min(available, limit)};
        }
    }
    return tightest;
}

Result<void> reclaimMemory(const std::filesystem::path& file, std::uint64_t bytes) {
    UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) {
            return Error{"this kernel has no memory.reclaim (5.19 and later have it): the work's pages are "
                         "reclaimed as the kernel meets its memory.high"};
        }
        return Error{"cannot write " + file.string() + ": " + std::strerror(errno)};
    }
    const std::string amount = std::to_string(bytes);
    // EAGAIN: the kernel reclaimed less than asked, which is news, not an error.
    if (::write(fd.get(), amount.c_str(), amount.size()) < 0 && errno != EAGAIN) {
        return Error{"the kernel refused memory.reclaim of the work: " + std::string(std::strerror(errno))};
    }
    return {};
}

Result<PressureTrigger> PressureTrigger::open(const std::filesystem::path& file, std::uint64_t stallUSec,
                                              std::uint64_t windowUSec) {
    UniqueFd fd(::open(file.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) {
        return Error{"cannot open " + file.string() + " for a trigger: " + std::strerror(errno)};
    }
    const std::string trigger = "some " + std::to_string(stallUSec) + " " + std::to_string(windowUSec);
    // The kernel takes the trigger with its terminating NUL.
    if (::write(fd.get(), trigger.c_str(), trigger.size() + 1) < 0) {
        return Error{"the kernel refused the trigger '" + trigger + "' on " + file.string() + ": " +
                     std::strerror(errno)};
    }
    return PressureTrigger(std::move(fd), file);
}

} // namespace nicer::kernel
