#include "actuator/SliceMemoryLimit.h"

#include "actuator/ActuatorNote.h"
#include "util/Text.h"
#include "util/TextFile.h"

#include <algorithm>
#include <cmath>
#include <unistd.h>

namespace nicer::actuator {

MemoryLimit memoryLimitFor(std::uint64_t totalBytes, double percent) {
    MemoryLimit limit;
    if (!(percent < 100.0) || totalBytes == 0) {
        return limit;
    }
    limit.percent = std::max(percent, 0.0);
    limit.max =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(totalBytes) * limit.percent / 100.0));
    limit.high = static_cast<std::uint64_t>(std::llround(static_cast<double>(limit.max) * kMemoryHighShare));
    return limit;
}

Result<std::uint64_t> parseMemTotal(std::string_view meminfo) {
    for (auto line : text::split(meminfo, '\n')) {
        if (!line.starts_with("MemTotal:")) {
            continue;
        }
        // "MemTotal:       16318412 kB"
        auto value = text::trim(line.substr(9));
        std::uint64_t kib = 0;
        if (!value.ends_with("kB") ||
            !text::parseNumber(text::trim(value.substr(0, value.size() - 2)), kib) || kib == 0) {
            return Error{"MemTotal is not '<number> kB': '" + std::string(line) + "'"};
        }
        return kib * 1024;
    }
    return Error{"no MemTotal line"};
}

Result<std::uint64_t> machineMemoryBytes(const std::filesystem::path& meminfo) {
    auto text = readTextFile(meminfo);
    if (text) {
        if (auto total = parseMemTotal(*text); total) {
            return total;
        } else {
            return Error{meminfo.string() + ": " + total.error().message};
        }
    }
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0) {
        return Error{"cannot tell the machine's memory size: " + text.error().message +
                     ", and sysconf knows no physical pages"};
    }
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
}

MemoryLimitOutcome applyMemoryLimit(usermanager::UnitManager& units, const kernel::CgroupLayout& layout,
                                    const std::string& slice, const std::string& cgroup,
                                    const MemoryLimit& limit) {
    auto set = units.setUnitProperties(slice, {{"MemoryHigh", limit.high}, {"MemoryMax", limit.max}});
    if (limit.none()) {
        return {}; // a refusal leaves no limit, which is what was asked for
    }
    if (!set) {
        return {kNoMemoryLimit, memoryLimitRefusedNote(limit.percent, limit.max, set.error().message)};
    }
    if (!cgroup.empty() && !layout.memoryControllerAvailable(cgroup)) {
        return {kNoMemoryLimit, memoryNotDelegatedNote(limit.percent, limit.max)};
    }
    return {limit.max, {}};
}

} // namespace nicer::actuator
