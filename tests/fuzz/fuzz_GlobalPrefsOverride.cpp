// BOINC's global preferences override (boinc/GlobalPrefsOverride), the volunteer's file as the client
// hands it over: nicer's settings and transfer limits go in, everything else stays. A file that takes
// nicer's settings has them afterwards and keeps its transfer limits; limits written read back as set
// (whole bytes per second, 0 for none); a file that one change refuses, every change refuses.

#include "FuzzSupport.h"
#include "boinc/GlobalPrefsOverride.h"

#include <cmath>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>

using namespace nicer;

namespace {

double whole(double bytesPerSecond) {
    return std::isfinite(bytesPerSecond) && bytesPerSecond > 0.0 ? std::round(bytesPerSecond) : 0.0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const double down = input.ConsumeBool() ? input.ConsumeFloatingPoint<double>()
                                            : input.ConsumeFloatingPointInRange<double>(-1.0, 1e9);
    const double up = input.ConsumeFloatingPointInRange<double>(-1.0, 1e12);
    const std::string text = input.ConsumeRemainingBytesAsString();

    const auto nicer = boinc::withNicerSettings(text);
    const auto limited = boinc::withTransferLimits(text, down, up);
    FUZZ_CHECK(nicer.ok() == limited.ok());
    if (!nicer) {
        FUZZ_CHECK(!boinc::hasNicerSettings(text));
        return 0;
    }
    FUZZ_CHECK(boinc::hasNicerSettings(*nicer));
    const auto before = boinc::transferCapsOf(text);
    const auto kept = boinc::transferCapsOf(*nicer);
    FUZZ_CHECK(kept.down == before.down && kept.up == before.up);
    // Applying nicer's settings again changes nothing.
    const auto twice = boinc::withNicerSettings(*nicer);
    FUZZ_CHECK(twice.ok() && *twice == *nicer);

    // Beyond 10^30 B/s a limit may be written as none.
    const auto caps = boinc::transferCapsOf(*limited);
    FUZZ_CHECK(caps.down == whole(down) || (caps.down == 0.0 && down >= 1e30));
    FUZZ_CHECK(caps.up == whole(up));
    FUZZ_CHECK(boinc::hasNicerSettings(*limited) == boinc::hasNicerSettings(text));
    const auto both = boinc::withTransferLimits(*nicer, down, up);
    FUZZ_CHECK(both.ok() && boinc::hasNicerSettings(*both));
    return 0;
}
