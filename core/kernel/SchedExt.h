#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace nicer::kernel {

/// Where the kernel (6.12 and later) shows its sched_ext state.
inline const std::filesystem::path kSchedExtDir = "/sys/kernel/sched_ext";

/// The name of the sched_ext (BPF) scheduler that runs, from @p dir/root/ops ("lavd", "bpfland", "rusty"
/// ...; "unknown" when it is not named) while @p dir/state reads "enabled"; nullopt when none runs or the
/// kernel has no sched_ext. Most of them ignore cpu.max and cpu.idle.
std::optional<std::string> runningSchedExt(const std::filesystem::path& dir = kSchedExtDir);

} // namespace nicer::kernel
