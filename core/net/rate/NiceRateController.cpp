#include "net/rate/NiceRateController.h"

#include "kernel/InterfaceTraffic.h"
#include "util/Text.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace nicer::net {

namespace {

using Clock = std::chrono::steady_clock;

// A genuine jump in traffic can be followed within a few periods; a bigger one in a single period is more
// likely an interface with old counters appearing than a faster link, and must not inflate C for a whole
// capacity window.
constexpr double kMaxCapacityGrowthPerStep = 4.0;

Error outOfRange(const char* name, const std::string& value, const char* range) {
    return Error{"nice rate option " + std::string(name) + " = " + value + " is out of range: it must be " +
                 range};
}

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

} // namespace

Result<void> validate(const NiceRateOptions& o) {
    if (auto reserve = control::validate(o.reserve); !reserve) {
        return Error{"nice rate reserve controller: " + reserve.error().message};
    }
    // Negated "inside" tests so that NaN is rejected as well.
    if (!(o.targetDelay.count() >= 1 && o.targetDelay.count() <= 1000)) {
        return outOfRange("target-delay", std::to_string(o.targetDelay.count()) + " ms", "in [1 ms, 1 s]");
    }
    if (!(o.baseRttWindow.count() >= 1 && o.baseRttBuckets >= 1 && o.baseRttBuckets <= 1000)) {
        return outOfRange("base-rtt-window/buckets",
                          std::to_string(o.baseRttWindow.count()) + " s / " +
                              std::to_string(o.baseRttBuckets),
                          "at least 1 s, in 1..1000 buckets");
    }
    if (!(o.currentRttSamples >= 1 && o.currentRttSamples <= 1000)) {
        return outOfRange("current-rtt-samples", std::to_string(o.currentRttSamples), "in 1..1000");
    }
    if (!(o.rttMaxAge.count() > 0)) {
        return outOfRange("rtt-max-age", std::to_string(o.rttMaxAge.count()) + " ms", "positive");
    }
    if (!(o.delayGain > 0.0 && o.delayGain <= 1.0)) {
        return outOfRange("delay-gain", text::shortNumber(o.delayGain),
                          "in (0, 1] (a share of the link per period)");
    }
    if (!(o.delayMaxCut > 0.0 && o.delayMaxCut < 1.0)) {
        return outOfRange("delay-max-cut", text::shortNumber(o.delayMaxCut), "in (0, 1)");
    }
    if (!(o.initialCapacity > 0.0 && std::isfinite(o.initialCapacity))) {
        return outOfRange("initial-capacity", text::shortNumber(o.initialCapacity),
                          "a positive number of bytes per second");
    }
    if (!(o.capacityWindow.count() >= 1)) {
        return outOfRange("capacity-window", std::to_string(o.capacityWindow.count()) + " s", "at least 1 s");
    }
    if (!(o.probeGain > 0.0 && o.probeGain <= 4.0)) {
        return outOfRange("probe-gain", text::shortNumber(o.probeGain), "in (0, 4]");
    }
    if (!(o.startupProbeGain > 0.0 && o.startupProbeGain <= 4.0)) {
        return outOfRange("startup-probe-gain", text::shortNumber(o.startupProbeGain), "in (0, 4]");
    }
    if (!(o.probeInterval.count() >= 0)) {
        return outOfRange("probe-interval", std::to_string(o.probeInterval.count()) + " s", ">= 0");
    }
    if (!(o.protocolOverhead >= 0.0 && o.protocolOverhead <= 1.0)) {
        return outOfRange("protocol-overhead", text::shortNumber(o.protocolOverhead), "in [0, 1]");
    }
    if (!(o.foregroundHeadroom >= 0.0 && o.foregroundHeadroom <= 4.0)) {
        return outOfRange("foreground-headroom", text::shortNumber(o.foregroundHeadroom), "in [0, 4]");
    }
    if (!(o.foregroundNoise >= 0.0 && o.foregroundNoise < 1.0)) {
        return outOfRange("foreground-noise", text::shortNumber(o.foregroundNoise), "in [0, 1)");
    }
    if (!(o.minRate > 0.0 && std::isfinite(o.minRate))) {
        return outOfRange("min-rate", text::shortNumber(o.minRate),
                          "a positive number of bytes per second (0 would let a download stall forever)");
    }
    if (!(o.maxSampleGap.count() >= 1)) {
        return outOfRange("max-sample-gap", std::to_string(o.maxSampleGap.count()) + " s", "at least 1 s");
    }
    return {};
}

NiceRateController::NiceRateController(const NiceRateOptions& options)
    : m_options(options)
    , m_reserve(options.reserve) {
    assert(validate(options).ok());
    m_ceiling = std::max(m_options.initialCapacity, minCapacity());
    m_status.capacity = m_ceiling;
    m_status.probing = m_probing;
    // The reserve controller starts at q = 0: the first period runs at the floor and tells us what is idle.
    m_status.rate = m_options.minRate;
}

double NiceRateController::minCapacity() const {
    return m_options.minRate * (1.0 + m_options.protocolOverhead);
}

void NiceRateController::restartPeriod(const LinkSample& sample) {
    m_last = sample;
    m_periodStart = sample.time;
    m_periodOurBytes = 0;
    m_periodInterfaceBytes = 0;
    m_periodHasInterface = sample.interfaceRxBytes.has_value();
}

std::optional<double> NiceRateController::onSample(const LinkSample& sample) {
    if (!m_last) {
        restartPeriod(sample);
        m_quietSince = sample.time;
        if (sample.rtt) {
            addRtt(sample.time, *sample.rtt);
        }
        return m_status.rate;
    }
    if (sample.time <= m_last->time) {
        return m_status.rate; // time did not advance: nothing to measure against
    }
    if (sample.time - m_last->time > m_options.maxSampleGap) {
        // Averaging over a suspend or a stall would read as an idle link; start measuring afresh.
        restartPeriod(sample);
        return m_status.rate;
    }
    if (sample.rtt) {
        addRtt(sample.time, *sample.rtt);
    }

    m_periodOurBytes += kernel::counterDelta(m_last->receivedBytes, sample.receivedBytes);
    if (m_periodHasInterface && m_last->interfaceRxBytes && sample.interfaceRxBytes) {
        m_periodInterfaceBytes += kernel::counterDelta(*m_last->interfaceRxBytes, *sample.interfaceRxBytes);
    } else {
        m_periodHasInterface = false;
    }
    m_last = sample;

    const auto elapsed = sample.time - m_periodStart;
    if (elapsed >= m_options.reserve.period) {
        step(sample.time, seconds(elapsed));
        m_periodStart = sample.time;
        m_periodOurBytes = 0;
        m_periodInterfaceBytes = 0;
        m_periodHasInterface = sample.interfaceRxBytes.has_value();
    }
    return m_status.rate;
}

void NiceRateController::addRtt(Clock::time_point time, std::chrono::nanoseconds rtt) {
    if (rtt <= std::chrono::nanoseconds::zero()) {
        return;
    }
    const auto bucketLength =
        std::chrono::duration_cast<Clock::duration>(m_options.baseRttWindow) / m_options.baseRttBuckets;
    if (m_baseRtt.empty() || time - m_baseRtt.back().start >= bucketLength) {
        m_baseRtt.push_back({time, rtt});
    } else {
        m_baseRtt.back().min = std::min(m_baseRtt.back().min, rtt);
    }
    while (m_baseRtt.size() > static_cast<std::size_t>(m_options.baseRttBuckets) ||
           m_baseRtt.front().start + m_options.baseRttWindow < time) {
        m_baseRtt.pop_front();
    }

    m_recentRtt.push_back({time, rtt});
    while (m_recentRtt.size() > static_cast<std::size_t>(m_options.currentRttSamples)) {
        m_recentRtt.pop_front();
    }
}

std::optional<std::chrono::nanoseconds> NiceRateController::queueingDelay(Clock::time_point now) {
    while (!m_recentRtt.empty() && m_recentRtt.front().time + m_options.rttMaxAge < now) {
        m_recentRtt.pop_front();
    }
    if (m_recentRtt.empty() || m_baseRtt.empty()) {
        return std::nullopt;
    }
    auto current = m_recentRtt.front().rtt;
    for (const auto& r : m_recentRtt) {
        current = std::min(current, r.rtt);
    }
    auto base = m_baseRtt.front().min;
    for (const auto& b : m_baseRtt) {
        base = std::min(base, b.min);
    }
    m_status.baseRtt = base;
    return std::max(current - base, std::chrono::nanoseconds::zero());
}

double NiceRateController::observedCapacity(Clock::time_point now) {
    while (!m_observedRates.empty() && m_observedRates.front().time + m_options.capacityWindow < now) {
        m_observedRates.pop_front();
    }
    double observed = 0.0;
    for (const auto& r : m_observedRates) {
        observed = std::max(observed, r.rate);
    }
    return observed;
}

NiceRateController::PeriodRates NiceRateController::periodRates(double elapsed) const {
    // Ours is payload; the interface counts link bytes, so ours is scaled up before the difference is
    // taken. Without interface counters all traffic seen is ours.
    PeriodRates rates;
    rates.ours = static_cast<double>(m_periodOurBytes) / elapsed;
    rates.oursOnLink = rates.ours * (1.0 + m_options.protocolOverhead);
    rates.total = rates.oursOnLink;
    if (m_periodHasInterface) {
        rates.total = std::max(rates.total, static_cast<double>(m_periodInterfaceBytes) / elapsed);
    }
    rates.foreground = rates.total - rates.oursOnLink;
    return rates;
}

NiceRateController::CapacityEstimate NiceRateController::updateCapacity(Clock::time_point now, double total) {
    // The largest total rate of the window, or the probe ceiling when that is higher.
    CapacityEstimate estimate;
    estimate.observedBefore = observedCapacity(now);
    const double before = std::max({estimate.observedBefore, m_ceiling, minCapacity()});
    m_observedRates.push_back({now, std::min(total, kMaxCapacityGrowthPerStep * before)});
    estimate.observedNow = observedCapacity(now);
    estimate.capacity = std::max({estimate.observedNow, m_ceiling, minCapacity()});
    return estimate;
}

double NiceRateController::idleShare(double foregroundClaim, bool congested) const {
    // Our part is the quota granted, not the traffic measured: bytes still in flight when the rate
    // drops, or a burst the window let through, would otherwise read as the link being full and stop us
    // for our own traffic; and quota the delay share or TCP competition keeps us from using is not idle
    // for the integral to collect, or it winds up and overshoots as soon as the brake comes off. Our own
    // queue still counts, through the delay.
    // A queue above the target means the link is full whatever the counters say (they cannot see a
    // bottleneck beyond the first hop, and the capacity may be overestimated).
    const double granted = m_reserve.state().quota;
    return congested ? 0.0 : std::clamp(1.0 - foregroundClaim - granted, 0.0, 1.0);
}

void NiceRateController::updateDelayShare(std::optional<std::chrono::nanoseconds> delay) {
    // rLEDBAT-style: multiplicative decrease above the target, growth proportional to the headroom below
    // it; with no RTT it opens so that the traffic signal alone decides.
    const auto& o = m_options;
    if (delay) {
        const double ratio =
            std::chrono::duration<double>(*delay) / std::chrono::duration<double>(o.targetDelay);
        if (ratio > 1.0) {
            m_delayShare *= std::max(1.0 - o.delayMaxCut, 2.0 - ratio);
        } else {
            m_delayShare += o.delayGain * (1.0 - ratio);
        }
    } else {
        m_delayShare += o.delayGain;
    }
    m_delayShare = std::clamp(m_delayShare, 0.0, 1.0);
}

void NiceRateController::updateProbe(Clock::time_point now, double total, const CapacityEstimate& estimate,
                                     bool quiet, bool limitedByReserve) {
    const auto& o = m_options;
    if (!(total > 0.0)) {
        return; // a period without any traffic says nothing about the link
    }
    if (!quiet) {
        // Someone else is using the link or it is queueing: believe only what was observed.
        stopProbing(now, estimate.observedNow);
    } else if (m_probing) {
        const double gain = m_startup ? o.startupProbeGain : o.probeGain;
        if (total > estimate.observedBefore * (1.0 + gain / 4.0)) {
            m_ceiling = std::max(m_ceiling, estimate.observedNow * (1.0 + gain));
        } else {
            stopProbing(now, estimate.observedNow);
        }
    } else if (!limitedByReserve) {
        m_quietSince = now; // idle capacity we do not use: nothing to gain from a probe
    } else if (now - m_quietSince >= o.probeInterval) {
        m_probing = true;
        m_ceiling = std::max(m_ceiling, estimate.observedNow * (1.0 + o.probeGain));
    }
}

void NiceRateController::stopProbing(Clock::time_point now, double observed) {
    m_probing = false;
    m_startup = false;
    m_ceiling = observed;
    m_quietSince = now;
}

double NiceRateController::allowedShare(double reserveQuota, double foreground, double foregroundClaim,
                                        double capacity) const {
    const auto& o = m_options;
    const double share = std::min(reserveQuota, m_delayShare);
    if (o.yieldAtOnce && foreground > o.foregroundNoise * capacity) {
        // The integral stays where it is (the next periods see the overload and bring it down); only the
        // rate given out now leaves the user's traffic its room.
        return std::min(share, std::max(0.0, 1.0 - foregroundClaim - o.reserve.reserveBand));
    }
    return share;
}

double NiceRateController::payloadRate(double capacity, double share) const {
    const double rate = capacity * share / (1.0 + m_options.protocolOverhead);
    return !std::isfinite(rate) || rate < m_options.minRate ? m_options.minRate : rate;
}

void NiceRateController::step(Clock::time_point now, double elapsed) {
    const auto& o = m_options;
    const PeriodRates rates = periodRates(elapsed);
    const auto delay = queueingDelay(now);
    const bool congested = delay && *delay > o.targetDelay;
    const CapacityEstimate estimate = updateCapacity(now, rates.total);
    const double capacity = estimate.capacity;

    const double foregroundShare = rates.foreground / capacity;
    const double foregroundClaim = foregroundShare * (1.0 + o.foregroundHeadroom);
    const double idle = idleShare(foregroundClaim, congested);
    const auto& reserve = m_reserve.step(idle);
    updateDelayShare(delay);

    const bool quiet = !congested && rates.foreground <= o.foregroundNoise * capacity;
    const bool limitedByReserve = idle <= (reserve.multiplier + 1.0) * o.reserve.reserveBand;
    updateProbe(now, rates.total, estimate, quiet, limitedByReserve);

    const double newCapacity = std::max({estimate.observedNow, m_ceiling, minCapacity()});
    const double share = allowedShare(reserve.quota, rates.foreground, foregroundClaim, capacity);
    const double rate = payloadRate(newCapacity, share);

    m_status.capacity = newCapacity;
    m_status.totalRate = rates.total;
    m_status.ourRate = rates.ours;
    m_status.foregroundShare = foregroundShare;
    m_status.ourShare = rates.oursOnLink / capacity;
    m_status.idleShare = idle;
    m_status.queueingDelay = delay;
    m_status.delayShare = m_delayShare;
    m_status.reserve = reserve;
    m_status.probing = m_probing;
    m_status.rate = rate;
    m_status.steps += 1;
}

std::unique_ptr<RateController> makeNiceRateController(const NiceRateOptions& options) {
    return std::make_unique<NiceRateController>(options);
}

} // namespace nicer::net
