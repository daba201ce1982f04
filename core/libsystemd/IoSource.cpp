#include "libsystemd/IoSource.h"

#include <cstring>
#include <string>

namespace nicer::libsystemd {

namespace {

int onIo(sd_event_source*, int, std::uint32_t revents, void* userdata) noexcept {
    detail::SourceState::run(userdata, revents);
    return 0;
}

} // namespace

Result<IoSource> IoSource::create(sd_event* event, int fd, std::uint32_t events, Callback callback) {
    auto state = std::make_shared<detail::SourceState>();
    state->callback = std::move(callback);
    sd_event_source* source = nullptr;
    const int r = sd_event_add_io(event, &source, fd, events, &onIo, state.get());
    if (r < 0) {
        return Error{"cannot watch file descriptor " + std::to_string(fd) +
                     " on the event loop: " + std::strerror(-r)};
    }
    state->source.reset(source);
    return IoSource(std::move(state));
}

void IoSource::setEvents(std::uint32_t events) {
    if (m_state) {
        sd_event_source_set_io_events(source(), events);
    }
}

std::uint32_t IoSource::events() const {
    std::uint32_t events = 0;
    if (m_state && sd_event_source_get_io_events(source(), &events) < 0) {
        return 0;
    }
    return events;
}

void IoSource::setEnabled(bool enabled) {
    if (m_state) {
        sd_event_source_set_enabled(source(), enabled ? SD_EVENT_ON : SD_EVENT_OFF);
    }
}

bool IoSource::enabled() const {
    int enabled = SD_EVENT_OFF;
    return m_state && sd_event_source_get_enabled(source(), &enabled) >= 0 && enabled != SD_EVENT_OFF;
}

int IoSource::fd() const {
    return m_state ? sd_event_source_get_io_fd(source()) : -1;
}

} // namespace nicer::libsystemd
