#pragma once

#include "actuator/QuotaActuator.h"
#include "api/Sample.h"
#include "util/Result.h"

#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace nicer::daemon {

/// True when the work's @p share of the machine is clearly above the @p cap it ran under: more than half as
/// much again, plus 5% of the machine, so that the overshoot of a quota changed inside a bandwidth window
/// (actuator/BandwidthWindows.h) and the noise of measuring never count.
bool clearlyAbove(double share, double cap);

/**
 * Checks, period after period, that the kernel holds the work to the slice's quota (cpu.max). A sched_ext
 * scheduler (Linux 6.12) or a kernel without CFS bandwidth control lets systemd set the quota and enforces
 * nothing. Each sample's work share is compared with the cap it ran under: the quota of the sample before,
 * or the one before that where it was higher (a lowered quota takes hold at the next window start). Periods
 * under no cap (frozen, paused) say nothing and start the count again. Cheap: arithmetic on the sample, so
 * it keeps checking for as long as nicerd runs (a sched_ext scheduler can start at any time).
 */
class QuotaEnforcement {
public:
    /// Consecutive periods clearly above the cap that show the cap is not enforced.
    static constexpr std::size_t kPeriods = 3;

    /// Takes one period's sample; true once the last kPeriods were all clearly above their caps.
    bool observe(const api::Sample& sample);
    /// The mean share and cap over the periods that made observe() true.
    double share() const;
    double cap() const;

private:
    std::optional<double> m_previousQuota;
    std::optional<double> m_quotaBefore;
    struct Period {
        double share;
        double cap;
    };
    std::deque<Period> m_over; ///< the last periods in a row clearly above their caps, at most kPeriods
};

/**
 * Watches the slice's quota with QuotaEnforcement and, when it is not enforced, makes the duty cycle to put
 * in its place, with the note that says why (naming the sched_ext scheduler that runs, read from
 * @p schedExtDir, injectable for tests).
 */
class EnforcementWatch {
public:
    using MakeFallback = std::function<Result<std::unique_ptr<actuator::QuotaActuator>>()>;
    struct Fallback {
        std::unique_ptr<actuator::QuotaActuator> actuator;
        std::string note;
    };

    EnforcementWatch(std::filesystem::path schedExtDir, MakeFallback makeFallback)
        : m_schedExtDir(std::move(schedExtDir))
        , m_makeFallback(std::move(makeFallback)) {}

    /// After each period: the duty cycle to switch to, once the quota shows not to be enforced; an error
    /// when it could not be made (the watch tries again after kPeriods more periods).
    std::optional<Result<Fallback>> afterTick(const api::Sample& sample);

private:
    std::filesystem::path m_schedExtDir;
    MakeFallback m_makeFallback;
    QuotaEnforcement m_check;
};

} // namespace nicer::daemon
