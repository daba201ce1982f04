#pragma once

#include "util/Result.h"
#include "util/UniqueFd.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::kernel {

/// A pressure file's stall times so far (PSI: /proc/pressure/memory, a cgroup's memory.pressure), in µs:
/// "some" while at least one of its tasks waited on memory, "full" while all of them did.
struct PressureTotals {
    std::uint64_t someUSec = 0;
    std::uint64_t fullUSec = 0;
};

/// The totals of a pressure file's text ("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull ...").
/// A file without a "full" line (the CPU's, before 5.13) has full 0.
Result<PressureTotals> parsePressure(std::string_view text);
Result<PressureTotals> readPressure(const std::filesystem::path& file);

/**
 * The cgroups of everything on the machine but the work in @p work (a path on the v2 tree under
 * @p unifiedRoot, "/user.slice/user-1000.slice/user@1000.service/app.slice/nicer.slice"): the siblings of the
 * work's cgroup and of each of its ancestors, up to the root, as paths like @p work. Together they hold every
 * process outside the work; none of them holds any of it. Their memory.pressure is what the volunteer's
 * programs, other users and the services wait on memory, without the work's own waits.
 */
Result<std::vector<std::string>> cgroupsBeside(const std::filesystem::path& unifiedRoot,
                                               std::string_view work);

/// A cgroup file that holds one count (memory.current, memory.swap.max); none where it cannot be read or says
/// "max".
std::optional<std::uint64_t> readCgroupCount(const std::filesystem::path& file);

/// The tightest memory limit that the work shares with the programs beside it: of the ancestors of @p
/// besideOf (not of @p besideOf itself, the work's own fence), the one whose memory.max or memory.high leaves
/// the least.
struct SharedLimit {
    std::string cgroup;          ///< as a path like @p besideOf ("/user.slice/user-1000.slice")
    std::uint64_t limit = 0;     ///< the smaller of its memory.max and memory.high
    std::uint64_t available = 0; ///< what is left below it: the limit less memory.current, plus inactive_file
};
/// None where no ancestor sets a limit (the usual desktop: only the work's own slice is fenced).
std::optional<SharedLimit> tightestSharedLimit(const std::filesystem::path& unifiedRoot,
                                               std::string_view besideOf);

/// Asks the kernel to reclaim @p bytes of the cgroup whose memory.reclaim is @p file (5.19 and later). A
/// kernel that reclaimed less than asked (EAGAIN) is no error; the error says what was missing or refused.
Result<void> reclaimMemory(const std::filesystem::path& file, std::uint64_t bytes);

/**
 * A PSI trigger on a pressure file: the kernel makes its descriptor readable for POLLPRI (EPOLLPRI) when the
 * tasks of the file's cgroup stalled on memory ("some") for @p stallUSec within a window of @p windowUSec,
 * at most once a window. Another user's cgroup refuses it (the file is theirs); so do kernels before 6.5 for
 * /proc/pressure without CAP_SYS_RESOURCE. Windows of a multiple of 2 s work unprivileged on every kernel
 * that has triggers.
 */
class PressureTrigger {
public:
    static Result<PressureTrigger> open(const std::filesystem::path& file, std::uint64_t stallUSec,
                                        std::uint64_t windowUSec);
    int fd() const { return m_fd.get(); }
    const std::filesystem::path& file() const { return m_file; }

private:
    PressureTrigger(UniqueFd fd, std::filesystem::path file)
        : m_fd(std::move(fd))
        , m_file(std::move(file)) {}
    UniqueFd m_fd;
    std::filesystem::path m_file;
};

} // namespace nicer::kernel
