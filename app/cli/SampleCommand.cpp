#include "SampleCommand.h"

#include "ExitCode.h"
#include "cpu/CpuSampler.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

namespace nicer::cli {

int runSample(const SampleOptions& o) {
    cpu::CpuSampler sampler(o.procStat);
    if (auto primed = sampler.prime(); !primed) {
        std::cerr << "nicer sample: " << primed.error().message << '\n';
        return kExitFailure;
    }
    std::printf(o.csv ? "elapsed_s,idle,busy,cpus\n" : "   time    idle    busy  cpus\n");
    std::fflush(stdout);

    using SteadyClock = std::chrono::steady_clock;
    const auto period =
        std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(o.periodSeconds));
    const auto start = SteadyClock::now();
    auto next = start;
    for (long printed = 0; o.count == 0 || printed < o.count;) {
        next += period; // a fixed schedule: printing time does not drift the samples
        std::this_thread::sleep_until(next);
        const auto usage = sampler.sample();
        if (!usage) {
            std::cerr << "nicer sample: " << usage.error().message << '\n';
            return kExitFailure;
        }
        if (usage->totalTicks == 0) {
            continue; // no tick elapsed (very short period): the next sample covers the longer span
        }
        const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
        if (o.csv) {
            std::printf("%.3f,%.6f,%.6f,%d\n", elapsed, usage->idle, usage->busy, usage->cpuCount);
        } else {
            std::printf("%6.2fs  %5.1f%%  %5.1f%%  %4d\n", elapsed, 100.0 * usage->idle, 100.0 * usage->busy,
                        usage->cpuCount);
        }
        std::fflush(stdout);
        ++printed;
    }
    return kExitOk;
}

} // namespace nicer::cli
