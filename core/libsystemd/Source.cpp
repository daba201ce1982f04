#include "libsystemd/Source.h"

namespace nicer::libsystemd::detail {

void SourceState::run(void* userdata, std::uint32_t revents) noexcept {
    // The callback may destroy the source that owns this state: the state, and the callback's captures,
    // live until it returns.
    try {
        const std::shared_ptr<SourceState> self = static_cast<SourceState*>(userdata)->shared_from_this();
        guarded(self->onError, [&] { self->callback(revents); });
    } catch (...) {
        // shared_from_this() cannot fail for a live source; there is nothing to report to if it did.
    }
}

void reportError(const ErrorHandler& onError, std::string_view what) noexcept {
    if (!onError) {
        return;
    }
    try {
        onError(what);
    } catch (...) {
        // The handler failed too: nothing is left that could say so.
    }
}

Source::Source(std::shared_ptr<SourceState> state)
    : m_state(std::move(state)) {}

Source::~Source() {
    reset();
}

Source& Source::operator=(Source&& other) noexcept {
    if (this != &other) {
        reset();
        m_state = std::move(other.m_state);
    }
    return *this;
}

void Source::reset() noexcept {
    if (m_state) {
        // Disabled and released now, even when the state lives on until a running callback returns.
        m_state->source.reset();
        m_state.reset();
    }
}

void Source::setErrorHandler(ErrorHandler handler) {
    if (m_state) {
        m_state->onError = std::move(handler);
    }
}

sd_event_source* Source::source() const {
    return m_state ? m_state->source.get() : nullptr;
}

} // namespace nicer::libsystemd::detail
