#include "cpu/CpuSampler.h"

#include <utility>

namespace nicer::cpu {

CpuSampler::CpuSampler(std::string path)
    : m_path(std::move(path)) {}

Result<void> CpuSampler::prime() {
    auto snap = kernel::readProcStat(m_path);
    if (!snap) {
        return snap.error();
    }
    m_previous = std::move(*snap);
    return {};
}

Result<CpuUsage> CpuSampler::sample() {
    if (!m_previous) {
        if (auto primed = prime(); !primed) {
            return primed.error();
        }
    }
    auto snap = kernel::readProcStat(m_path);
    if (!snap) {
        return snap.error();
    }
    const CpuUsage usage = usageBetween(*m_previous, *snap);
    if (usage.totalTicks > 0) {
        m_previous = std::move(*snap);
    }
    return usage;
}

} // namespace nicer::cpu
