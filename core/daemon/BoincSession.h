#pragma once

#include "api/Boinc.h"
#include "boinc/BoincRpc.h"
#include "boinc/GuiRpcClient.h"
#include "daemon/BoincClock.h"
#include "daemon/BoincRateGovernor.h"
#include "daemon/DaemonControl.h"
#include "libsystemd/Timer.h"
#include "workload/BoincCommand.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * nicerd's side of a BOINC client that runs as (part of) the workload: it watches the client over its GUI
 * RPC, keeps nicer's preferences override in force, makes the client's transfers yield to the user's
 * traffic, and carries out attach and detach. All on the daemon's loop; nothing blocks it.
 *
 * Every poll (1 s) it reads the client's status and transfers and feeds the transfers to the
 * BoincRateGovernor, whose limits it pushes into the override; every second poll it reads the projects,
 * tasks, notices and error messages; every tenth the override, to find the volunteer's changes (the BOINC
 * Manager replaces the whole file): those are kept as the volunteer's and nicer's settings go back on top.
 *
 * It keeps BOINC's elapsed-time clock as fast as the tasks run (BoincClock): when a task's elapsed time runs
 * ahead of its CPU time, the client (not its tasks) is stopped for a span that BOINC does not count, and
 * nothing is asked of it until it runs again. Each task's elapsed-time limit comes from get_state, read
 * again when a task appears.
 *
 * The files in the client's directory (the override before the client starts, and after it stops) are
 * boinc/ClientDirectory's; the daemon calls them around the client's start and stop.
 */
class BoincSession {
public:
    struct Options {
        workload::BoincClientCommand client;
        std::filesystem::path procNetDev = "/proc/net/dev";
        /// The processes of the client (the work's), whose TCP sockets tell its traffic on the link and the
        /// link's queue; without it BOINC's own transfer counts are taken, and no round trips.
        std::function<std::vector<pid_t>()> clientPids;
        std::chrono::milliseconds pollInterval{1000};
        /// How long the client may take to answer after its start before the state says Error.
        std::chrono::seconds startupGrace{60};
        BoincRateOptions rates;
        /// Stops (true) or continues (false) the client's own process, never its tasks: how BOINC's clock is
        /// kept (BoincClock). Without it the clock runs as BOINC's own.
        std::function<Result<void>(bool stop)> stopClient;
        BoincClockOptions clock;
    };

    /// Starts watching the client of @p options on @p event; @p onStateChanged is called when the state,
    /// its detail or whether the override is in force changes.
    static Result<std::unique_ptr<BoincSession>> start(sd_event* event, Options options,
                                                       std::function<void()> onStateChanged);
    ~BoincSession();
    BoincSession(const BoincSession&) = delete;
    BoincSession& operator=(const BoincSession&) = delete;

    /// What nicerd shows of the client (systemService is the daemon's to fill).
    const api::BoincStatus& status() const { return m_status; }

    /**
     * While nicer holds the work (the controller stopped it, or the volunteer paused it), the client is
     * frozen with its tasks and cannot answer: the state says Held and @p why, and nothing is asked of
     * the client until it runs again.
     */
    void setHeld(bool held, const std::string& why);

    /// Whether BOINC's elapsed-time clock is kept as fast as its tasks run (BoincClock; the boinc-clock
    /// parameter). Off: the client is continued at once and counts the wall clock, as it does alone.
    void setKeepClock(bool keep);

    /// How many CPUs the client may use, as BOINC's max_ncpus_pct in nicer's override (the profile's
    /// max-instances: boinc::maxNcpusPctFor); sent when it changes, and put back if the volunteer's override
    /// replaces nicer's.
    void setMaxNcpusPct(double percent);

    void attach(const std::string& url, const std::string& key, BoincRequests::Done done);
    void attachAccountManager(const std::string& url, const std::string& name, const std::string& password,
                              BoincRequests::Done done);
    void detach(const std::string& url, BoincRequests::Done done);

    const Options& options() const { return m_options; }

private:
    struct Waiting;
    struct Operation;

    BoincSession(sd_event* event, Options options, std::function<void()> onStateChanged);

    void onTimer();
    void poll();
    void governTransfers();
    void readLists();
    void checkOverride();
    /// Sends nicer's override with the limits @p wanted (never above the volunteer's own) to the client.
    void pushOverride(const TransferLimits& wanted);
    /// The transfer limits in force, to send again with another change of the override.
    TransferLimits transferLimits() const;
    void onRpcError(const Error& error);
    /// The tasks' limits from get_state, when a running task has none yet (at most every few seconds).
    void readLimits();
    void applyLimits();
    /// After the lists were read: stops the client when BoincClock says so.
    void keepClock();
    /// Continues a client stopped for the clock (once the work is not frozen any more).
    void continueClient();
    void setClockText(std::string text);
    /// The running tasks, as the clock sees them; those whose app version is not known yet are left out.
    std::vector<ClockTask> runningTasks() const;
    void setState(api::BoincState state, std::string detail);
    void setOverrideApplied(bool applied);
    /// Registers a caller's callback, so that it is answered even when the session ends first.
    std::shared_ptr<Waiting> wait(BoincRequests::Done done);
    /// Polls a background operation (attach, account manager) at each poll until it is done.
    void follow(std::function<void(boinc::BoincRpc::Done<boinc::OperationPoll>)> poll,
                std::shared_ptr<Waiting> waiting);
    void followOperations();

    sd_event* m_event;
    Options m_options;
    std::function<void()> m_onStateChanged;
    std::unique_ptr<boinc::GuiRpcClient> m_client;
    std::unique_ptr<boinc::BoincRpc> m_rpc;
    BoincRateGovernor m_governor;
    libsystemd::Timer m_timer;
    libsystemd::Timer m_clockTimer; ///< continues the client after a stop
    BoincClock m_clock;
    bool m_keepClock = true;
    bool m_continueOnRelease = false; ///< the clock's stop ended while the work was frozen
    boinc::TaskLimitMap m_limits;
    bool m_limitsAsked = false; ///< a get_state is under way
    std::chrono::steady_clock::time_point m_limitsAskedAt{};
    std::chrono::steady_clock::time_point m_startedAt;
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);

    api::BoincStatus m_status;
    bool m_answered = false; ///< the client has answered at least once
    bool m_polling = false;  ///< a poll's calls are under way
    bool m_held = false;     ///< the work (and the client with it) is frozen
    int m_polls = 0;
    std::string m_nicerOverride;  ///< the override nicer wants in force, without the transfer limits
    double m_maxNcpusPct = 100.0; ///< nicer's max_ncpus_pct in it (setMaxNcpusPct)
    std::int64_t m_noticeSeqno = 0;
    std::int64_t m_messageSeqno = 0;
    std::vector<api::BoincNotice> m_notices; ///< the notices so far
    std::vector<api::BoincNotice> m_errors;  ///< the error messages so far
    std::vector<std::shared_ptr<Operation>> m_operations;
    std::vector<std::weak_ptr<Waiting>> m_waiting;
};

} // namespace nicer::daemon
