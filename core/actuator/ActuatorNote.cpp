#include "actuator/ActuatorNote.h"

#include "util/Text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace nicer::actuator {

namespace {

/// How the duty cycle @p duty holds the work, as a clause.
std::string howDutyCycleHolds(api::Actuator duty) {
    return duty == api::Actuator::SignalDutyCycle
               ? "a duty cycle: it stops the work (SIGSTOP) for part of every 100 ms"
               : "a duty cycle: it freezes the work for part of every 100 ms";
}

std::string percent(double share) {
    return std::to_string(static_cast<int>(std::lround(std::clamp(share, 0.0, 1.0) * 100))) + "%";
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) {
        out += (out.empty() ? "" : " ") + name;
    }
    return out;
}

/// What an administrator runs so that user managers get the cpu and memory controllers.
constexpr const char* kDelegateFix =
    "sudo mkdir -p /etc/systemd/system/user@.service.d && printf '[Service]\\nDelegate=pids memory cpu\\n' | "
    "sudo tee /etc/systemd/system/user@.service.d/delegate-cpu.conf && sudo systemctl daemon-reload; "
    "then log out and back in.";

std::string percentText(double percent) {
    char text[32];
    std::snprintf(text, sizeof text, "%g%%", percent);
    return text;
}

/// "50% of the machine's memory, 3.9 GiB"
std::string memoryLimitText(double percent, std::uint64_t bytes) {
    return percentText(percent) + " of the machine's memory, " + text::humanBytes(static_cast<double>(bytes));
}

} // namespace

std::string dutyCycleFallbackNote(api::Actuator duty, std::string_view userManager,
                                  const std::optional<std::vector<std::string>>& controllers,
                                  std::string_view whySliceFailed) {
    const bool cpuDelegated =
        controllers && std::find(controllers->begin(), controllers->end(), "cpu") != controllers->end();
    if (cpuDelegated) {
        return "nicer could not cap the work with the CPU quota of its systemd slice (" +
               std::string(whySliceFailed) + "), so it uses " + howDutyCycleHolds(duty) + ".";
    }
    const std::string manager = userManager.empty()
                                    ? std::string("the systemd user manager")
                                    : "the systemd user manager (" + std::string(userManager) + ")";
    std::string what;
    if (!controllers) {
        what = manager + " does not delegate the cpu controller";
    } else if (controllers->empty()) {
        what = "the cgroup of " + manager + " lists no controllers, so it has no cpu controller";
    } else {
        what =
            "the cgroup of " + manager + " lists only the controllers " + joined(*controllers) + ", not cpu";
    }
    return what +
           ": the kernel would not enforce a CPU quota on the work's slice, so nicer caps the work with " +
           howDutyCycleHolds(duty) +
           ". To get the smoother CPU quota, an administrator delegates cpu to user managers: " +
           kDelegateFix;
}

std::string dutyCycleFallbackNote(const kernel::CgroupLayout& layout, std::string_view sliceCgroup,
                                  api::Actuator duty, std::string_view whySliceFailed) {
    const std::string userManager = kernel::CgroupLayout::userManagerCgroup(sliceCgroup);
    std::optional<std::vector<std::string>> controllers;
    if (!userManager.empty()) {
        if (auto read = layout.readControllers(userManager); read) {
            controllers = std::move(*read);
        }
    }
    const auto name = userManager.substr(userManager.rfind('/') + 1);
    return dutyCycleFallbackNote(duty, name, controllers, whySliceFailed);
}

std::string dutyCycleChosenNote(api::Actuator duty) {
    return "nicerd's configuration chose " + std::string(api::busKeyword(duty)) +
           " (its actuator option), so it caps the work with " + howDutyCycleHolds(duty) +
           ". The CPU quota of a systemd slice holds the work back more smoothly: set the actuator to auto "
           "to use "
           "it wherever the user manager delegates the cpu controller.";
}

std::string idleWeightRefusedNote(std::string_view systemdVersion) {
    const std::string systemd =
        systemdVersion.empty() ? std::string("This systemd") : "systemd " + std::string(systemdVersion);
    return systemd +
           " refuses CPUWeight=idle (it needs systemd 252 or later), so the work has the smallest CPU weight "
           "(1) instead, and only its quota holds it back against your programs: they may wait a little "
           "longer for a CPU when they wake up.";
}

std::string memoryLimitRefusedNote(double percent, std::uint64_t bytes, std::string_view why) {
    return "systemd refused the memory limit of the work's slice (" + memoryLimitText(percent, bytes) + ": " +
           std::string(why) +
           "), so the work runs without one: when memory runs short, systemd-oomd may stop your programs "
           "rather than the work. MemoryHigh and MemoryMax need systemd 231 or later.";
}

std::string memoryNotDelegatedNote(double percent, std::uint64_t bytes) {
    return "The systemd user manager does not delegate the memory controller, so the kernel does not enforce "
           "the work's memory limit (" +
           memoryLimitText(percent, bytes) +
           "): when memory runs short, systemd-oomd may stop your programs rather than the work. An "
           "administrator delegates memory to user managers: " +
           kDelegateFix;
}

std::string capNotEnforcedNote(const std::optional<std::string>& schedExt, double share, double quota,
                               api::Actuator duty) {
    const std::string measured = "the work used " + percent(share) + " of the machine under a cap of " +
                                 percent(quota) + ", period after period";
    const std::string switched = "so nicer switched to " + howDutyCycleHolds(duty) + ".";
    if (schedExt) {
        return "The kernel runs the sched_ext scheduler " + *schedExt +
               ", which does not enforce the CPU quota (cpu.max) of the work's slice: " + measured + ", " +
               switched + " Without that scheduler, nicer uses the quota again from its next start.";
    }
    return "The kernel does not enforce the CPU quota (cpu.max) of the work's slice: " + measured + ", " +
           switched;
}

} // namespace nicer::actuator
