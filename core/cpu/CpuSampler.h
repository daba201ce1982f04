#pragma once

#include "cpu/CpuUsage.h"
#include "kernel/ProcStat.h"
#include "util/Result.h"

#include <optional>
#include <string>

namespace nicer::cpu {

/// Reads /proc/stat (or an injected path) and reports the machine's usage since the previous read.
class CpuSampler {
public:
    explicit CpuSampler(std::string path = "/proc/stat");

    /// Takes the reference read; sample() measures from here.
    Result<void> prime();

    /**
     * Reads again and returns the usage since the last sample (or prime()). When no tick has passed yet the
     * usage has totalTicks == 0 and the older reference is kept, so the next call covers the longer span.
     * An error means the file could not be read or parsed.
     */
    Result<CpuUsage> sample();

    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::optional<kernel::ProcStatSnapshot> m_previous;
};

} // namespace nicer::cpu
