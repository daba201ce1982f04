#pragma once

#include "api/Actuator.h"
#include "kernel/CgroupLayout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::actuator {

// Why the work is capped less well than it could be, and what to do about it, in words for the volunteer
// (nicerd's ActuatorNote property: `nicer status` and the tray show it). Empty when all is well.

/// A duty cycle (@p duty) runs because the slice's CPU quota could not be used (@p whySliceFailed). The
/// user manager's cgroup @p userManager (empty: not found) lists @p controllers (nullopt: unreadable); when
/// cpu is not among them, the note gives the administrator's fix: delegate cpu to user@.service.
std::string dutyCycleFallbackNote(api::Actuator duty, std::string_view userManager,
                                  const std::optional<std::vector<std::string>>& controllers,
                                  std::string_view whySliceFailed);
/// The same, with the controllers read from the user manager's cgroup above @p sliceCgroup.
std::string dutyCycleFallbackNote(const kernel::CgroupLayout& layout, std::string_view sliceCgroup,
                                  api::Actuator duty, std::string_view whySliceFailed);

/// The duty cycle @p duty runs because nicerd's configuration asks for it (the actuator option), not
/// because the slice's quota failed: the note says so, and what auto would give.
std::string dutyCycleChosenNote(api::Actuator duty);

/// systemd (of version @p systemdVersion, empty: unknown) refused CPUWeight=idle, so the work has the
/// smallest weight instead.
std::string idleWeightRefusedNote(std::string_view systemdVersion);

/// systemd refused the work's memory limit of @p percent of the machine's memory (@p bytes): @p why. The work
/// runs without one.
std::string memoryLimitRefusedNote(double percent, std::uint64_t bytes, std::string_view why);
/// The user manager does not delegate the memory controller, so the kernel does not enforce the memory limit
/// of @p percent (@p bytes) that systemd took; the note gives the administrator's fix.
std::string memoryNotDelegatedNote(double percent, std::uint64_t bytes);

/// The kernel let the work use @p share of the machine under a quota of @p quota over several periods, so
/// nicerd switched to the duty cycle @p duty; @p schedExt names the sched_ext scheduler that runs, if one
/// does (it ignores cpu.max).
std::string capNotEnforcedNote(const std::optional<std::string>& schedExt, double share, double quota,
                               api::Actuator duty);

} // namespace nicer::actuator
