#include "daemon/QuotaEnforcement.h"

#include "actuator/ActuatorNote.h"
#include "kernel/SchedExt.h"

#include <algorithm>

namespace nicer::daemon {

bool clearlyAbove(double share, double cap) {
    return share > cap * 1.5 + 0.05;
}

bool QuotaEnforcement::observe(const api::Sample& sample) {
    const std::optional<double> previous = m_previousQuota;
    const std::optional<double> before = m_quotaBefore;
    m_quotaBefore = m_previousQuota;
    m_previousQuota = sample.paused ? 0.0 : sample.quota;
    // The first periods, or one the work spent frozen (the freeze held it, not the quota), say nothing.
    const bool capped = previous && before && *previous > 0.0 && !sample.paused;
    const double cap = capped ? std::max(*previous, *before) : 0.0;
    if (!capped || !clearlyAbove(sample.background, cap)) {
        m_over.clear();
        return false;
    }
    m_over.push_back({sample.background, cap});
    if (m_over.size() > kPeriods) {
        m_over.pop_front();
    }
    return m_over.size() == kPeriods;
}

double QuotaEnforcement::share() const {
    double sum = 0.0;
    for (const auto& period : m_over) {
        sum += period.share;
    }
    return m_over.empty() ? 0.0 : sum / static_cast<double>(m_over.size());
}

double QuotaEnforcement::cap() const {
    double sum = 0.0;
    for (const auto& period : m_over) {
        sum += period.cap;
    }
    return m_over.empty() ? 0.0 : sum / static_cast<double>(m_over.size());
}

std::optional<Result<EnforcementWatch::Fallback>> EnforcementWatch::afterTick(const api::Sample& sample) {
    if (!m_check.observe(sample)) {
        return std::nullopt;
    }
    const double share = m_check.share();
    const double cap = m_check.cap();
    m_check = QuotaEnforcement(); // a failed fallback is tried again only after as much evidence again
    auto made = m_makeFallback();
    if (!made) {
        return Result<Fallback>(
            Error{"the kernel does not enforce the slice's CPU quota, and no duty cycle can "
                  "take its place: " +
                  made.error().message});
    }
    Fallback fallback;
    fallback.note =
        actuator::capNotEnforcedNote(kernel::runningSchedExt(m_schedExtDir), share, cap, (*made)->kind());
    fallback.actuator = std::move(*made);
    return Result<Fallback>(std::move(fallback));
}

} // namespace nicer::daemon
