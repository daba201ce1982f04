#pragma once

namespace nicer::cli {

/// Exit statuses of `nicer`, in the usual shell convention.
enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,  ///< the command could not do its work (e.g. /proc/stat unreadable)
    kExitBadInput = 2, ///< bad arguments, a bad parameter value or a bad input file
};

} // namespace nicer::cli
