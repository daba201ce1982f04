#pragma once

// RAII for sd-event handles: the loop and its sources, shared by everything in nicer that runs on the loop.

#include <systemd/sd-event.h>

#include <memory>

namespace nicer::libsystemd {

struct SdEventDeleter {
    void operator()(sd_event* event) const noexcept { sd_event_unref(event); }
};
struct SdEventSourceDeleter {
    // Disable too: the loop may hold another reference, and a source we dropped must not fire any more.
    void operator()(sd_event_source* source) const noexcept { sd_event_source_disable_unref(source); }
};

using EventPtr = std::unique_ptr<sd_event, SdEventDeleter>;
using EventSourcePtr = std::unique_ptr<sd_event_source, SdEventSourceDeleter>;

} // namespace nicer::libsystemd
