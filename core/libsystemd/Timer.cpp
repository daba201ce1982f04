#include "libsystemd/Timer.h"

#include <cstring>
#include <string>

namespace nicer::libsystemd {

namespace {

Error sourceError(const char* what, int r) {
    return Error{std::string("cannot set up ") + what + " on the event loop: " + std::strerror(-r)};
}

int onTime(sd_event_source*, std::uint64_t, void* userdata) noexcept {
    detail::SourceState::run(userdata, 0);
    return 0;
}

int onDefer(sd_event_source*, void* userdata) noexcept {
    detail::SourceState::run(userdata, 0);
    return 0;
}

} // namespace

Result<Timer> Timer::create(sd_event* event, std::function<void()> callback, clockid_t clock,
                            std::chrono::microseconds accuracy) {
    auto state = std::make_shared<detail::SourceState>();
    state->callback = [callback = std::move(callback)](std::uint32_t) { callback(); };
    state->clock = clock;
    state->due = UINT64_MAX;
    sd_event_source* source = nullptr;
    const int r = sd_event_add_time(event, &source, clock, UINT64_MAX,
                                    static_cast<std::uint64_t>(std::max<std::int64_t>(accuracy.count(), 0)),
                                    &onTime, state.get());
    if (r < 0) {
        return sourceError("a timer", r);
    }
    state->source.reset(source);
    sd_event_source_set_enabled(source, SD_EVENT_OFF);
    return Timer(std::move(state));
}

void Timer::armAt(Time when) {
    if (!m_state) {
        return;
    }
    m_state->due = static_cast<std::uint64_t>(std::max<Time::rep>(when.count(), 0));
    sd_event_source_set_time(source(), m_state->due);
    sd_event_source_set_enabled(source(), SD_EVENT_ONESHOT);
}

void Timer::disarm() {
    if (m_state) {
        sd_event_source_set_enabled(source(), SD_EVENT_OFF);
    }
}

bool Timer::armed() const {
    int enabled = SD_EVENT_OFF;
    return m_state && sd_event_source_get_enabled(source(), &enabled) >= 0 && enabled != SD_EVENT_OFF;
}

Timer::Time Timer::due() const {
    return Time(m_state ? static_cast<Time::rep>(m_state->due) : 0);
}

Timer::Time Timer::now() const {
    std::uint64_t usec = 0;
    if (m_state) {
        sd_event_now(sd_event_source_get_event(source()), m_state->clock, &usec);
    }
    return Time(static_cast<Time::rep>(usec));
}

Result<Defer> Defer::create(sd_event* event, std::function<void()> callback) {
    auto state = std::make_shared<detail::SourceState>();
    state->callback = [callback = std::move(callback)](std::uint32_t) { callback(); };
    sd_event_source* source = nullptr;
    const int r = sd_event_add_defer(event, &source, &onDefer, state.get());
    if (r < 0) {
        return sourceError("a deferred call", r);
    }
    state->source.reset(source);
    sd_event_source_set_enabled(source, SD_EVENT_OFF);
    return Defer(std::move(state));
}

void Defer::trigger() {
    if (m_state) {
        sd_event_source_set_enabled(source(), SD_EVENT_ONESHOT);
    }
}

void Defer::cancel() {
    if (m_state) {
        sd_event_source_set_enabled(source(), SD_EVENT_OFF);
    }
}

bool Defer::pending() const {
    int enabled = SD_EVENT_OFF;
    return m_state && sd_event_source_get_enabled(source(), &enabled) >= 0 && enabled != SD_EVENT_OFF;
}

} // namespace nicer::libsystemd
