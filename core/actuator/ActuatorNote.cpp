#include "actuator/ActuatorNote.h"

#include <algorithm>
#include <cmath>

namespace nicer::actuator {

namespace {

/// How the duty cycle @p dutyName holds the work, as a clause.
std::string howDutyCycleHolds(std::string_view dutyName) {
    return dutyName == "signal-duty-cycle"
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

} // namespace

std::string dutyCycleFallbackNote(std::string_view dutyName, std::string_view userManager,
                                  const std::optional<std::vector<std::string>>& controllers,
                                  std::string_view whySliceFailed) {
    const bool cpuDelegated =
        controllers && std::find(controllers->begin(), controllers->end(), "cpu") != controllers->end();
    if (cpuDelegated) {
        return "nicer could not cap the work with the CPU quota of its systemd slice (" +
               std::string(whySliceFailed) + "), so it uses " + howDutyCycleHolds(dutyName) + ".";
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
           howDutyCycleHolds(dutyName) +
           ". To get the smoother CPU quota, an administrator delegates cpu to user managers: sudo mkdir -p "
           "/etc/systemd/system/user@.service.d && printf '[Service]\\nDelegate=pids memory cpu\\n' | sudo "
           "tee "
           "/etc/systemd/system/user@.service.d/delegate-cpu.conf && sudo systemctl daemon-reload; then log "
           "out and back in.";
}

std::string dutyCycleFallbackNote(const systemd::CgroupLayout& layout, std::string_view sliceCgroup,
                                  std::string_view dutyName, std::string_view whySliceFailed) {
    const std::string userManager = systemd::CgroupLayout::userManagerCgroup(sliceCgroup);
    std::optional<std::vector<std::string>> controllers;
    if (!userManager.empty()) {
        if (auto read = layout.readControllers(userManager); read) {
            controllers = std::move(*read);
        }
    }
    const auto name = userManager.substr(userManager.rfind('/') + 1);
    return dutyCycleFallbackNote(dutyName, name, controllers, whySliceFailed);
}

std::string idleWeightRefusedNote(std::string_view systemdVersion) {
    const std::string systemd =
        systemdVersion.empty() ? std::string("This systemd") : "systemd " + std::string(systemdVersion);
    return systemd +
           " refuses CPUWeight=idle (it needs systemd 252 or later), so the work has the smallest CPU weight "
           "(1) instead, and only its quota holds it back against your programs: they may wait a little "
           "longer for a CPU when they wake up.";
}

std::string capNotEnforcedNote(const std::optional<std::string>& schedExt, double share, double quota,
                               std::string_view dutyName) {
    const std::string measured = "the work used " + percent(share) + " of the machine under a cap of " +
                                 percent(quota) + ", period after period";
    const std::string switched = "so nicer switched to " + howDutyCycleHolds(dutyName) + ".";
    if (schedExt) {
        return "The kernel runs the sched_ext scheduler " + *schedExt +
               ", which does not enforce the CPU quota (cpu.max) of the work's slice: " + measured + ", " +
               switched + " Without that scheduler, nicer uses the quota again from its next start.";
    }
    return "The kernel does not enforce the CPU quota (cpu.max) of the work's slice: " + measured + ", " +
           switched;
}

} // namespace nicer::actuator
