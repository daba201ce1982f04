#pragma once

#include "cpu/CpuUsage.h"

#include <cstdint>
#include <optional>

namespace nicer::cpu {

/**
 * Where the machine's time went in one period, split at the user manager's boundary; shares of the whole
 * machine that add up to 1.
 *
 * Inside the user manager, the kernel's idle weight (cpu.idle) already makes the work yield to its siblings
 * at once; outside it (system services, containers and VMs, other users, login sessions), the whole user
 * slice competes at its weight, and only the quota protects what runs there.
 */
struct DemandSplit {
    double idle = 0.0;
    double work = 0.0;    ///< the volunteer work
    double inside = 0.0;  ///< your programs: the rest of the user manager, beside the work
    double outside = 0.0; ///< other users and services: everything outside the user manager
    bool split = false;   ///< false when the user manager's CPU time was not known: inside holds all the rest
};

/**
 * Splits one period. Pure.
 *
 * @p usage is the machine's usage from /proc/stat over the period and @p machineNSec the CPU time the
 * machine had in it (its ticks in ns); @p workNSec and @p managerNSec are the CPU time the work's cgroup and
 * the user manager's cgroup (the work's included) used over the same period, from their cgroups' counters.
 * The counters and /proc/stat are read a moment apart, so each share is held inside what the coarser
 * reading allows: the work within the busy time, the user manager within [work, busy].
 */
DemandSplit splitDemand(const CpuUsage& usage, double machineNSec, std::uint64_t workNSec,
                        std::optional<std::uint64_t> managerNSec);

} // namespace nicer::cpu
