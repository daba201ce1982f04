#pragma once

#include "api/Boinc.h"
#include "api/Sample.h"
#include "boinc/SystemService.h"
#include "daemon/BoincSession.h"
#include "daemon/DaemonControl.h"
#include "util/Result.h"
#include "workload/WorkloadSpec.h"

#include <systemd/sd-event.h>

#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::daemon {

/**
 * Everything of BOINC that nicerd governs beside the work itself: the BOINC client the work runs (its
 * preferences override around its start and stop, its session: rates, hold, attach and detach) and the
 * system-wide client that would compete with it (looked for now and then, without blocking the loop).
 * The daemon calls it around the work's start, switch and stop, and once a period.
 */
class BoincSupervisor final : public BoincRequests {
public:
    /// The work's processes, the client among them (read from its cgroup at each poll).
    using WorkPids = std::function<std::vector<pid_t>()>;

    /// On @p event; @p changed is called when status() changed between periods.
    BoincSupervisor(sd_event* event, std::function<void()> changed);

    /// Before @p spec starts: when it runs the BOINC client, nicer's override goes into its directory. An
    /// error stops the start (the volunteer's own override could not be kept).
    static Result<void> prepare(const workload::WorkloadSpec& spec);
    /// After @p spec started: follows its BOINC client, if it runs one; a client nicer cannot follow is said
    /// in status().
    void start(const workload::WorkloadSpec& spec, WorkPids workPids);
    /// Stops following the client (the work is about to stop or change).
    void stop();
    /// After @p stopped stopped: its BOINC client gets the volunteer's override back, unless the work
    /// @p running now uses the same BOINC directory.
    static Result<void> restore(const workload::WorkloadSpec& stopped,
                                const workload::WorkloadSpec* running = nullptr);

    /// Once a period, with its sample: the client is held while the work is (paused, or no spare CPU), and
    /// every 30 periods the system-wide client is looked for again.
    /// @p keepClock: the boinc-clock parameter (BoincSession::setKeepClock); @p maxNcpusPct: how many CPUs
    /// the client may use for its tasks (BoincSession::setMaxNcpusPct).
    void onPeriod(const api::Sample& last, bool keepClock, double maxNcpusPct);
    /// Looks for the system-wide client now (at start; later onPeriod does).
    void lookForSystemService();

    /// The client's state, projects, tasks, transfers and notices, and the system-wide client's advice.
    api::BoincStatus status() const;

    void attach(const std::string& url, const std::string& key, Done done) override;
    void attachAccountManager(const std::string& url, const std::string& name, const std::string& password,
                              Done done) override;
    void detach(const std::string& url, Done done) override;

private:
    /// The system-wide client's advice, as the last look found it; announced when it changed.
    void setSystemService(std::string advice);
    void notify() const;

    sd_event* m_event;
    std::function<void()> m_changed;
    std::unique_ptr<BoincSession> m_session;
    std::string m_error; ///< why the work's BOINC client cannot be governed
    boinc::SystemServiceProbe m_probe;
    std::string m_systemService; ///< advice while the system-wide BOINC client is enabled or running
    int m_periods = 0;
};

} // namespace nicer::daemon
