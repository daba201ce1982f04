#pragma once

#include <string>

namespace nicer::cli {

struct SampleOptions {
    double periodSeconds = 1.0;
    long count = 0; ///< 0: until interrupted
    bool csv = false;
    std::string procStat = "/proc/stat";
};

/// `nicer sample [--period S] [--count N]`: the machine's live idle and busy fractions, one line per period.
int runSample(const SampleOptions& options);

} // namespace nicer::cli
