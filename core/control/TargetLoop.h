#pragma once

namespace nicer::control {

/// The gains of a TargetLoop, per unit of its reading (a degree Celsius; a hundred rpm for a fan).
struct TargetTuning {
    /// Change of the cap (a share of the machine) per unit the error changed in a period.
    double proportional = 0.02;
    /// Change of the cap per unit of error per second.
    double integral = 0.002;
    /// A reading this many units over the target trips the loop: the cap drops to 0 and stays there for the
    /// resume delay.
    double tripMargin = 5.0;
};

/**
 * Holds a reading (the CPU's temperature, the fans' speed) at or under a target by capping the work: a PI
 * controller in velocity form, so the cap moves smoothly and never winds up past 0 or 1. Its gains hold on
 * a family of first-order thermal plants, time constants of 2 to 60 s and 20 to 60 °C at the whole machine,
 * with the cap acting one or two periods late and periods of 250 ms to 1 s (`nicer simulate --thermal-*`,
 * docs/controller.md, "The temperature target"): they settle at the target without a steady swing.
 *
 * A reading far over the target (tripMargin) is not something to creep back from: the cap drops to 0 and the
 * heat is given back only after the resume delay, then smoothly from 0. Pure: no clock, no I/O.
 */
class TargetLoop {
public:
    explicit TargetLoop(TargetTuning tuning = {})
        : m_tuning(tuning) {}

    /// One period of @p seconds with @p reading against @p target (same unit); @p resumeDelay is the wait
    /// after a trip, in seconds. Returns the cap, 0..1.
    double step(double reading, double target, double seconds, double resumeDelay);

    double cap() const { return m_cap; }
    /// Seconds left of the wait after a trip; 0 when not waiting.
    double waitLeft() const { return m_wait; }
    /// Back to no cap, as after a start.
    void reset();

private:
    TargetTuning m_tuning;
    double m_cap = 1.0;
    double m_wait = 0.0;
    double m_lastError = 0.0;
    bool m_started = false;
};

} // namespace nicer::control
