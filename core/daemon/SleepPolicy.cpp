#include "daemon/SleepPolicy.h"

namespace nicer::daemon {

SleepVerdict sleepVerdict(int keepAwake, bool onBattery, const api::Sample& last) {
    if (keepAwake == 0) {
        return {false, "sleeps as it would without nicer (keep-awake = 0)"};
    }
    if (onBattery) {
        return {false, "may sleep: on battery"};
    }
    if (last.paused || (last.quota <= 0.0 && !last.heldBy.empty())) {
        return {false, "may sleep: the work is paused"};
    }
    return {true, "kept awake: the work runs on mains power"};
}

void SleepPolicy::follow(int keepAwake, bool onBattery, const api::Sample& last) {
    m_verdict = sleepVerdict(keepAwake, onBattery, last);
    m_inhibitor.want(m_verdict.awake ? "volunteer work runs on mains power (nicer keep-awake = 1)" : "");
}

void SleepPolicy::describe(api::DaemonState& state) const {
    state.keepingAwake = m_inhibitor.held();
    if (m_verdict.awake && m_inhibitor.held()) {
        state.sleepNote = m_verdict.note + " (" + m_inhibitor.heldBy() + ")";
    } else {
        state.sleepNote =
            m_verdict.awake && !m_inhibitor.note().empty() ? m_inhibitor.note() : m_verdict.note;
    }
}

} // namespace nicer::daemon
