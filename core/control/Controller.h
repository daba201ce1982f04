#pragma once

#include "control/ControllerParams.h"
#include "util/Keywords.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::control {

/// What the controller holds between periods.
struct ControllerState {
    double multiplier = 1.0; ///< m: how many reserve bands of idle are kept
    int overloadCount = 0;   ///< c: consecutive periods with no idle
    double quota = 0.0;      ///< q: the work's share of the whole machine, 0 = stopped
};

/**
 * What the controller answers each period.
 *
 * Machine: the thesis's signal, the idle time of the whole machine. Outside: only the demand that comes from
 * outside the user manager (system services, containers and VMs, other users), for when the kernel already
 * makes the work yield to everything beside it in the user manager (cpu.idle 1 on its slice): idle there is
 * relative to siblings only, so what runs outside competes with the whole user slice and only the quota
 * protects it. Auto: Outside where the work's slice has cpu.idle 1 and the user manager's CPU time can be
 * read, else Machine.
 */
enum class Signal { Auto, Machine, Outside };

/// "auto", "machine", "outside": the values of --signal, the trace's signal column, the bus and `nicer status
/// --json`.
inline constexpr std::array<std::string_view, 3> kSignalKeywords = {"auto", "machine", "outside"};

constexpr std::string_view signalName(Signal signal) {
    return keywordIn(kSignalKeywords, signal);
}
/// The inverse of signalName(), or nullopt.
constexpr std::optional<Signal> parseSignal(std::string_view text) {
    return valueIn<Signal>(kSignalKeywords, text);
}

/// The idle share of the whole machine kept free for the user's programs: multiplier x reserve band, at most
/// the whole machine; none in a period of the outside signal that left the work uncapped (@p quota 1: nothing
/// outside the user manager needed a band). What `nicer status` and the tray show as the reserve.
double reserveKept(double reserveBand, double multiplier, bool outsideSignal = false, double quota = 0.0);

/**
 * The thesis's starvation-detection controller (Figure 4), step for step as docs/controller.md gives it
 * ("Exactly").
 *
 * Pure and deterministic: the output depends only on the parameters and the sequence of idle fractions fed
 * to step(), so any recorded idle trace can be replayed offline.
 */
class Controller {
public:
    /// @p params must have passed validate(); the state starts at m = m_min, c = 0, q = 0.
    explicit Controller(const ControllerParams& params);

    /// Feeds one period's idle fraction of the whole machine (0..1) and returns the new state: the thesis.
    const ControllerState& step(double idle);

    /**
     * Feeds one period of the split signal (Signal::Outside): the idle fraction of the whole machine, the
     * work's share and the share used outside the user manager, all 0..1. The thesis's steps, except that an
     * overload is a period without idle in which the outside used more than one band and the work more than
     * one band (else cutting the work would give the outside nothing), that no band and no cap are kept
     * while the outside uses at most one band and the multiplier is at its minimum, that outside an overload
     * the room integrated is all the outside and the work leave (the kernel gives your programs their time
     * back at once), and that the quota is integrated from what the work used when that was less.
     * docs/controller.md has the rationale.
     */
    const ControllerState& stepOutside(double idle, double work, double outside);

    /// Changes the parameters while running, keeping the integral (quota) and clamping m into the new range.
    void setParams(const ControllerParams& params);

    /// Back to the initial state (m = m_min, c = 0, q = 0).
    void reset();

    const ControllerState& state() const { return m_state; }
    const ControllerParams& params() const { return m_params; }

private:
    /// Step 1 of both signals: widen the band after an overload (a period without idle), else let it decay.
    void adjustMultiplier(bool overload);
    /// Step 2's stop after repeated overload; true when it stopped the work.
    bool stopAfterOverload();

    ControllerParams m_params;
    ControllerState m_state;
};

} // namespace nicer::control
