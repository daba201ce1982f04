#include "presence/LastInput.h"

#include <algorithm>

namespace nicer::presence {

std::optional<wallclock::TimePoint>
LastInput::update(const PresenceVerdict& verdict, wallclock::TimePoint now, std::chrono::milliseconds delay) {
    using control::Presence;
    if (verdict.presence == Presence::Unknown) {
        m_last.reset();
        m_away = false;
        return std::nullopt;
    }
    auto last = verdict.sinceInput ? now - *verdict.sinceInput : now;
    if (verdict.presence == Presence::Away) {
        last = std::min(last, now - delay);
        if (m_away && m_last) {
            last = std::min(last, *m_last); // away all along: the time since grows
        }
    }
    m_away = verdict.presence == Presence::Away;
    m_last = last;
    return last;
}

} // namespace nicer::presence
