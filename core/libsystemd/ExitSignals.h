#pragma once

// A process's stop signals on an sd-event loop: blocked, then read from the loop's signalfd, where they end
// the loop, so that whatever runs on it shuts down in order instead of dying in the middle of a step.

#include "libsystemd/Event.h"
#include "util/Result.h"

#include <initializer_list>
#include <vector>

namespace nicer::libsystemd {

/// Blocks @p signals in the calling thread; threads it starts later inherit the mask. Until a loop reads them
/// (exitOnSignals), they wait instead of ending the process.
void blockSignals(std::initializer_list<int> signals);

/// Sources on @p event that end its loop (exit status 0) when one of @p signals arrives; each must be blocked
/// first (blockSignals). They act as long as the returned sources live.
Result<std::vector<EventSourcePtr>> exitOnSignals(sd_event* event, std::initializer_list<int> signals);

} // namespace nicer::libsystemd
