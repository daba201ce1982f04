#include "libsystemd/ExitSignals.h"

#include <csignal>
#include <cstring>
#include <string>

namespace nicer::libsystemd {

namespace {

int onSignal(sd_event_source* source, const struct signalfd_siginfo* /*info*/, void* /*userdata*/) noexcept {
    sd_event_exit(sd_event_source_get_event(source), 0);
    return 0;
}

} // namespace

void blockSignals(std::initializer_list<int> signals) {
    sigset_t mask;
    sigemptyset(&mask);
    for (const int signal : signals) {
        sigaddset(&mask, signal);
    }
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
}

Result<std::vector<EventSourcePtr>> exitOnSignals(sd_event* event, std::initializer_list<int> signals) {
    std::vector<EventSourcePtr> sources;
    for (const int signal : signals) {
        sd_event_source* source = nullptr;
        if (const int r = sd_event_add_signal(event, &source, signal, &onSignal, nullptr); r < 0) {
            return Error{std::string("cannot watch ") + sigdescr_np(signal) + " (" + sigabbrev_np(signal) +
                         ") on the event loop: " + std::strerror(-r)};
        }
        sources.emplace_back(source);
    }
    return sources;
}

} // namespace nicer::libsystemd
