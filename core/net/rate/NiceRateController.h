#pragma once

#include "control/Controller.h"
#include "control/ControllerParams.h"
#include "net/rate/RateController.h"
#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

namespace nicer::net {

/// Parameters of the nice download mode (NiceRateController). The defaults are what `nicer fetch --nice`
/// uses; docs/bench-net.md says how they were chosen.
struct NiceRateOptions {
    /// The reserve-band controller run on the link's idle share, as on the CPU. Its period is the
    /// controller's step: samples closer together are added up until a period has passed. 500 ms (the
    /// fetcher samples every 100 ms): the download yields within about two seconds, and does not grow back
    /// into a competing download's room faster than TCP can take it (250 ms let it keep a third of a
    /// 20 Mbit/s link, docs/bench-net.md). Band 5% of the link; m_max 8 rather than the CPU's 16 so the
    /// download is back near full speed ~4 s after the user's traffic stops; epsilon 2% because byte
    /// counters of a busy link are never exactly full. The band decays one step per period, as in the
    /// thesis: the figures of docs/bench-net.md were measured so.
    control::ControllerParams reserve{.reserveBand = 0.05,
                                      .minMultiplier = 1.0,
                                      .maxMultiplier = 8.0,
                                      .multiplierDecay = 1.0,
                                      .overloadThreshold = 4,
                                      .idleEpsilon = 0.02,
                                      .period = std::chrono::milliseconds{500}};

    /// Queueing delay (RTT above the base RTT) the download may add to the user's traffic. Above it the link
    /// counts as full. RFC 6817 allows up to 100 ms and LEDBAT++/RFC 9840 use 60 ms; 25 ms is kept lower
    /// because a volunteer's download must not be what makes a call or a game lag.
    std::chrono::milliseconds targetDelay{25};
    /// The base RTT is the minimum over this window, kept in baseRttBuckets buckets so that a route change
    /// is forgotten after at most one window (RFC 6817: 10 one-minute buckets).
    std::chrono::seconds baseRttWindow{300};
    int baseRttBuckets = 10;
    /// The current RTT is the minimum of the last this many samples: PINGs that waited behind a burst of
    /// our own data, or Wi-Fi jitter, must not read as a standing queue.
    int currentRttSamples = 4;
    /// RTT samples older than this are not "current" any more: without newer ones the delay is unknown and
    /// the controller falls back to the traffic signal alone.
    std::chrono::milliseconds rttMaxAge{3000};
    /// Delay share w (rLEDBAT-like): per period it grows by delayGain * (1 - delay/target) below the target
    /// and is multiplied by max(1 - delayMaxCut, 2 - delay/target) above it.
    double delayGain = 0.25;
    double delayMaxCut = 0.5;

    /// Starting guess of the link's capacity, in interface bytes per second, before anything is measured.
    double initialCapacity = 2.0 * 1024 * 1024;
    /// How long an observed traffic rate keeps the capacity estimate up.
    std::chrono::seconds capacityWindow{30};
    /// Capacity probing: when the link is quiet and the reserve controller is what limits the download,
    /// once per probeInterval the estimate is raised by probeGain for a period; it keeps growing while the
    /// traffic follows, and falls back to what was observed as soon as it does not. 10% overloads a full
    /// link for one period by less than the target delay's worth of queue. At the start, until the first
    /// probe fails, the gain is startupProbeGain, so that a 1 Gbit/s link is found in a few seconds.
    double probeGain = 0.1;
    double startupProbeGain = 0.5;
    std::chrono::seconds probeInterval{10};
    /// Interface bytes per payload byte beyond 1 (Ethernet, IP, TCP, TLS and HTTP/2 framing), so that our
    /// own download is not mistaken for the user's traffic.
    double protocolOverhead = 0.05;
    /// The user's own traffic counts this much larger than measured when the idle share is worked out, so
    /// that it can grow by this share of itself before it meets the download. Without it an elastic
    /// foreground (a bulk download that is limited by its receive window rather than the bottleneck, so
    /// it builds no queue) leaves the few percent the counters cannot resolve for the download to take.
    double foregroundHeadroom = 0.25;
    /// Traffic that is not ours below this share of the capacity is noise, not the user.
    double foregroundNoise = 0.03;
    /// When the user's traffic appears, cap our share at once at what it leaves (1 - (1 + h) f - band)
    /// instead of waiting for the reserve controller to integrate down over several periods. For a
    /// client that reacts to a new rate a period late (BOINC, told through its preferences file).
    bool yieldAtOnce = false;
    /// The allowed rate never falls below this (payload bytes per second), so a download always advances.
    double minRate = 16.0 * 1024;
    /// A gap between two samples longer than this (a suspended machine, a stalled loop) restarts the
    /// measurement instead of averaging over it.
    std::chrono::seconds maxSampleGap{5};
};

/// Checks every option; the error names the first one out of range and its allowed range.
Result<void> validate(const NiceRateOptions& options);

/// What NiceRateController concluded at its last step, for status output and tests.
struct NiceRateStatus {
    double capacity = 0.0;        ///< C: interface bytes/s the link is believed to carry (incl. a probe)
    double totalRate = 0.0;       ///< all received traffic, interface bytes/s
    double ourRate = 0.0;         ///< our payload bytes/s
    double foregroundShare = 0.0; ///< f: traffic that is not ours, as a share of C
    double ourShare = 0.0;        ///< our traffic as a share of C
    /// What the reserve controller was fed: 1 - (1 + h) f - q, 0 when the delay is above the target.
    double idleShare = 0.0;
    std::optional<std::chrono::nanoseconds> baseRtt;
    std::optional<std::chrono::nanoseconds> queueingDelay; ///< current RTT - base RTT, when known
    double delayShare = 1.0;                               ///< w: the delay controller's share of C
    control::ControllerState reserve;                      ///< q is the reserve controller's share of C
    bool probing = false;
    double rate = 0.0; ///< the answer: allowed payload bytes/s
    int steps = 0;     ///< periods evaluated so far
};

/**
 * The nice mode: a download that yields to the user's own traffic.
 *
 * The link is treated like the CPU. Its capacity C is the largest total receive rate seen lately (raised
 * by probing while the link is quiet); the user's foreground share is f = (interface rx - our rx) / C; the
 * idle share i = 1 - (1 + h) f - q feeds the thesis's reserve-band controller, whose quota q is our share
 * of C (h: foregroundHeadroom, room for the user's traffic to grow).
 * (Our part counts as the quota granted rather than the bytes measured, because the fetcher's flow control
 * lags the rate by a window: our own overshoot must not read as the user's traffic.) A
 * queueing delay above the target (receiver-side LEDBAT, RFC 9840, with the RTT of HTTP/2 PINGs and the
 * minimum RTT over a window as the base) counts as "no idle", and also cuts a delay share w multiplicatively.
 * The allowed rate is C * min(q, w), in payload bytes, never below minRate.
 *
 * Pure and deterministic: no I/O and no clock of its own; the answer depends only on the options and the
 * samples, so a recorded sample trace replays exactly.
 */
class NiceRateController : public RateController {
public:
    /// @p options must pass validate().
    explicit NiceRateController(const NiceRateOptions& options = {});

    std::optional<double> onSample(const LinkSample& sample) override;

    const NiceRateStatus& status() const { return m_status; }
    const NiceRateOptions& options() const { return m_options; }

private:
    struct RttBucket {
        std::chrono::steady_clock::time_point start;
        std::chrono::nanoseconds min;
    };
    struct TimedRtt {
        std::chrono::steady_clock::time_point time;
        std::chrono::nanoseconds rtt;
    };
    struct TimedRate {
        std::chrono::steady_clock::time_point time;
        double rate = 0.0;
    };

    // One period's receive rates, in bytes per second.
    struct PeriodRates {
        double ours = 0.0;       // our payload
        double oursOnLink = 0.0; // our payload with its protocol overhead, as the interface counts it
        double total = 0.0;      // all traffic on the link
        double foreground = 0.0; // traffic that is not ours
    };
    // The capacity before and after a period's total rate joins the window.
    struct CapacityEstimate {
        double observedBefore = 0.0; // the window's largest rate before this period
        double observedNow = 0.0;    // the window's largest rate with this period
        double capacity = 0.0;       // C for this period: observedNow, or the probe ceiling if higher
    };

    void addRtt(std::chrono::steady_clock::time_point time, std::chrono::nanoseconds rtt);
    std::optional<std::chrono::nanoseconds> queueingDelay(std::chrono::steady_clock::time_point now);
    double observedCapacity(std::chrono::steady_clock::time_point now);
    void step(std::chrono::steady_clock::time_point now, double seconds);
    PeriodRates periodRates(double elapsed) const;
    CapacityEstimate updateCapacity(std::chrono::steady_clock::time_point now, double total);
    double idleShare(double foregroundClaim, bool congested) const;
    void updateDelayShare(std::optional<std::chrono::nanoseconds> delay);
    void updateProbe(std::chrono::steady_clock::time_point now, double total,
                     const CapacityEstimate& estimate, bool quiet, bool limitedByReserve);
    void stopProbing(std::chrono::steady_clock::time_point now, double observed);
    double allowedShare(double reserveQuota, double foreground, double foregroundClaim,
                        double capacity) const;
    double payloadRate(double capacity, double share) const;
    double minCapacity() const;
    void restartPeriod(const LinkSample& sample);

    NiceRateOptions m_options;
    control::Controller m_reserve;
    NiceRateStatus m_status;

    std::optional<LinkSample> m_last;
    std::chrono::steady_clock::time_point m_periodStart;
    std::uint64_t m_periodOurBytes = 0;
    std::uint64_t m_periodInterfaceBytes = 0;
    bool m_periodHasInterface = true;

    std::deque<RttBucket> m_baseRtt;
    std::deque<TimedRtt> m_recentRtt;
    std::deque<TimedRate> m_observedRates;

    // The probe ceiling: capacity believed beyond what was observed (the starting guess, or a probe).
    double m_ceiling = 0.0;
    bool m_probing = true;
    bool m_startup = true;
    std::chrono::steady_clock::time_point m_quietSince;
    double m_delayShare = 1.0;
};

/// The nice controller with @p options (which must pass validate()); what `nicer fetch --nice` uses.
std::unique_ptr<RateController> makeNiceRateController(const NiceRateOptions& options = {});

} // namespace nicer::net
