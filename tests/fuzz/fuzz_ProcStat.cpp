// /proc/stat: parseProcStat on any text, and the machine's usage between two reads. The input is one file,
// or two separated by a form feed ('\f', which /proc/stat never holds): the reads before and after a period.

#include "FuzzSupport.h"
#include "cpu/CpuUsage.h"
#include "kernel/ProcStat.h"

#include <cmath>
#include <string>

using namespace nicer;

namespace {

std::string lineOf(const std::string& label, const kernel::CpuTimes& t) {
    return label + " " + std::to_string(t.user) + " " + std::to_string(t.nice) + " " +
           std::to_string(t.system) + " " + std::to_string(t.idle) + " " + std::to_string(t.iowait) + " " +
           std::to_string(t.irq) + " " + std::to_string(t.softirq) + " " + std::to_string(t.steal) + " " +
           std::to_string(t.guest) + " " + std::to_string(t.guestNice) + "\n";
}

/// The snapshot written as the kernel would write it.
std::string format(const kernel::ProcStatSnapshot& snap) {
    std::string text = lineOf("cpu", snap.aggregate);
    for (const auto& [id, times] : snap.perCpu) {
        text += lineOf("cpu" + std::to_string(id), times);
    }
    return text + "intr 0\nctxt 0\n";
}

void checkSnapshot(const kernel::ProcStatSnapshot& snap) {
    for (const auto& entry : snap.perCpu) {
        FUZZ_CHECK(entry.first >= 0);
    }
    // What parses is what the kernel could have written: written again, it reads back the same.
    const auto again = kernel::parseProcStat(format(snap));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->aggregate == snap.aggregate);
    FUZZ_CHECK(again->perCpu == snap.perCpu);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input = fuzz::asText(data, size);
    const auto split = input.find('\f');
    const auto before = kernel::parseProcStat(input.substr(0, split));
    if (before) {
        checkSnapshot(*before);
    }
    if (split == std::string_view::npos) {
        return 0;
    }
    const auto after = kernel::parseProcStat(input.substr(split + 1));
    if (!before || !after) {
        return 0;
    }
    checkSnapshot(*after);
    const cpu::CpuUsage usage = cpu::usageBetween(*before, *after);
    FUZZ_CHECK(usage.cpuCount >= 1);
    FUZZ_CHECK(usage.cpuCount == (after->perCpu.empty() ? 1 : static_cast<int>(after->perCpu.size())));
    if (usage.totalTicks > 0) {
        FUZZ_CHECK(std::isfinite(usage.idle) && usage.idle >= 0.0 && usage.idle <= 1.0);
        FUZZ_CHECK(usage.busy == 1.0 - usage.idle);
    } else {
        FUZZ_CHECK(usage.idle == 0.0 && usage.busy == 0.0);
    }
    return 0;
}
