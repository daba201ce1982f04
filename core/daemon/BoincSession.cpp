#include "daemon/BoincSession.h"

#include "api/BusNames.h"
#include "boinc/ClientDirectory.h"
#include "boinc/GlobalPrefsOverride.h"
#include "boinc/GuiRpcPassword.h"
#include "daemon/BoincArguments.h"
#include "kernel/InterfaceTraffic.h"
#include "kernel/TcpSockets.h"

#include <algorithm>

namespace nicer::daemon {

namespace {

/// How many notices and error messages are kept for display, the newest.
constexpr std::size_t kKeptNotices = 50;

/// The time of @p a before @p b, for the merged list of notices and errors.
bool earlier(const api::BoincNotice& a, const api::BoincNotice& b) {
    return a.time != b.time ? a.time < b.time : a.seqno < b.seqno;
}

void keepNewest(std::vector<api::BoincNotice>& notices) {
    if (notices.size() > kKeptNotices) {
        notices.erase(notices.begin(), notices.end() - static_cast<std::ptrdiff_t>(kKeptNotices));
    }
}

} // namespace

/// A caller's callback that is called exactly once: with BOINC's answer, or with an error when the session
/// ends first (so that a D-Bus caller always gets a reply).
struct BoincSession::Waiting {
    BoincRequests::Done done;
    void finish(Result<void> result) {
        if (done) {
            auto call = std::move(done);
            done = nullptr;
            call(std::move(result));
        }
    }
};

struct BoincSession::Operation {
    std::function<void(boinc::BoincRpc::Done<boinc::OperationPoll>)> poll;
    std::shared_ptr<Waiting> waiting;
    int pollsLeft = 0; ///< before giving up: api::kBoincOperationLimit at the session's poll interval
    bool asked = false;
};

Result<std::unique_ptr<BoincSession>> BoincSession::start(sd_event* event, Options options,
                                                          std::function<void()> onStateChanged) {
    auto session =
        std::unique_ptr<BoincSession>(new BoincSession(event, std::move(options), std::move(onStateChanged)));
    const auto& dir = session->m_options.client.dir;
    auto password = boinc::readGuiRpcPassword(dir / boinc::kPasswordFile);
    if (!password) {
        return password.error();
    }
    auto client = boinc::GuiRpcClient::create(event, "127.0.0.1",
                                              static_cast<std::uint16_t>(session->m_options.client.rpcPort),
                                              std::move(*password));
    if (!client) {
        return client.error();
    }
    session->m_client = std::move(*client);
    session->m_client->setTimeout(std::chrono::seconds(5));
    session->m_rpc = std::make_unique<boinc::BoincRpc>(*session->m_client);
    auto volunteer = boinc::savedVolunteerOverride(dir);
    if (!volunteer) {
        return volunteer.error();
    }
    auto nicer = boinc::withNicerSettings(*volunteer);
    if (!nicer) {
        return Error{"BOINC's saved preferences override in " + dir.string() +
                     " cannot be read: " + nicer.error().message};
    }
    session->m_nicerOverride = std::move(*nicer);
    auto timer = libsystemd::Timer::create(event, [s = session.get()] { s->onTimer(); });
    if (!timer) {
        return Error{"cannot start polling the BOINC client: " + timer.error().message};
    }
    session->m_timer = std::move(*timer);
    auto clockTimer = libsystemd::Timer::create(event, [s = session.get()] { s->continueClient(); });
    if (!clockTimer) {
        return Error{"cannot start keeping BOINC's clock: " + clockTimer.error().message};
    }
    session->m_clockTimer = std::move(*clockTimer);
    if (session->m_options.stopClient) {
        // A nicerd that ended while the client was stopped left it so; continuing a running one does nothing.
        (void)session->m_options.stopClient(false);
    }
    session->m_timer.armIn(std::chrono::milliseconds(0));
    return session;
}

BoincSession::BoincSession(sd_event* event, Options options, std::function<void()> onStateChanged)
    : m_event(event)
    , m_options(std::move(options))
    , m_onStateChanged(std::move(onStateChanged))
    , m_governor(m_options.rates)
    , m_clock(m_options.clock)
    , m_startedAt(std::chrono::steady_clock::now()) {
    m_status.state = api::BoincState::Starting;
}

BoincSession::~BoincSession() {
    *m_alive = false;
    m_timer = libsystemd::Timer();
    if (m_clock.isStopped() || m_continueOnRelease) {
        (void)m_options.stopClient(false);
    }
    m_clockTimer = libsystemd::Timer();
    m_operations.clear();
    for (const auto& weak : m_waiting) {
        if (auto waiting = weak.lock()) {
            waiting->finish(
                Error{"the BOINC client stopped before it answered (the workload changed, or nicerd is "
                      "stopping)"});
        }
    }
}

void BoincSession::onTimer() {
    m_timer.armIn(m_options.pollInterval);
    poll();
}

void BoincSession::setHeld(bool held, const std::string& why) {
    if (!held && m_held && m_options.stopClient) {
        // The work was frozen with the client and is given back. Where freezing is SIGSTOP and SIGCONT to
        // every process (cgroup v1), the thaw also continued a client the clock keeps stopped: stop it again.
        // Where it is the cgroup freezer, a client whose stop ended while frozen is still stopped: continue
        // it.
        if (m_clock.isStopped()) {
            (void)m_options.stopClient(true);
        } else if (m_continueOnRelease) {
            (void)m_options.stopClient(false);
            m_clock.continued(std::chrono::steady_clock::now()); // its window starts now
        }
        m_continueOnRelease = false;
    }
    m_held = held;
    if (held) {
        setState(api::BoincState::Held, why);
    }
}

void BoincSession::setKeepClock(bool keep) {
    m_keepClock = keep;
    if (!keep) {
        continueClient();
        setClockText("");
    }
}

void BoincSession::poll() {
    if (m_held || m_clock.isStopped()) {
        return; // a frozen or stopped client cannot answer
    }
    followOperations();
    if (m_polling) {
        return; // the client is slow: one poll at a time
    }
    m_polling = true;
    ++m_polls;
    m_rpc->getCcStatus([this, alive = m_alive](Result<boinc::CcStatus> cc) {
        if (!*alive) {
            return;
        }
        if (!cc) {
            m_polling = false;
            onRpcError(cc.error());
            return;
        }
        m_answered = true;
        if (cc->tasksSuspended()) {
            setState(api::BoincState::Suspended, cc->taskSuspendText);
        } else {
            setState(api::BoincState::Running, "");
        }
        m_rpc->getFileTransfers([this, alive](Result<std::vector<api::BoincTransfer>> transfers) {
            if (!*alive) {
                return;
            }
            if (!transfers) {
                m_polling = false;
                onRpcError(transfers.error());
                return;
            }
            m_status.transfers = *transfers;
            governTransfers();
            if (m_polls % 10 == 1) {
                checkOverride();
            }
            if (m_polls % 2 == 1) {
                readLists();
            } else {
                m_polling = false;
            }
        });
    });
}

void BoincSession::governTransfers() {
    BoincRateGovernor::Sample sample{std::chrono::steady_clock::now(), std::nullopt, std::nullopt,
                                     m_status.transfers, std::nullopt};
    if (auto interfaces = kernel::readNetDev(m_options.procNetDev)) {
        sample.interfaceRxBytes = kernel::totalReceivedBytes(*interfaces);
        sample.interfaceTxBytes = kernel::totalSentBytes(*interfaces);
    }
    if (m_options.clientPids) {
        if (auto sockets = kernel::tcpSocketsOf(m_options.clientPids())) {
            sample.sockets = std::move(*sockets);
        }
    }
    if (auto limits = m_governor.onSample(sample)) {
        pushOverride(*limits);
    }
}

void BoincSession::pushOverride(const TransferLimits& wanted) {
    // The volunteer's own limits stay the ceiling: nicer only ever lowers them.
    const auto caps = boinc::transferCapsOf(m_nicerOverride);
    const auto capped = [](double want, double cap) {
        return cap > 0.0 && (want <= 0.0 || want > cap) ? cap : want;
    };
    const TransferLimits limits{capped(wanted.down, caps.down), capped(wanted.up, caps.up)};
    auto text = boinc::withTransferLimits(m_nicerOverride, limits.down, limits.up);
    if (!text) {
        setState(api::BoincState::Error,
                 "cannot write BOINC's preferences override: " + text.error().message);
        return;
    }
    m_rpc->setGlobalPrefsOverride(*text, [this, alive = m_alive, limits](const Result<void>& set) {
        if (!*alive) {
            return;
        }
        if (!set) {
            onRpcError(set.error());
            return;
        }
        m_status.maxDownRate = limits.down;
        m_status.maxUpRate = limits.up;
        setOverrideApplied(true);
    });
}

TransferLimits BoincSession::transferLimits() const {
    return m_governor.pushed().value_or(TransferLimits{m_status.maxDownRate, m_status.maxUpRate});
}

void BoincSession::setMaxNcpusPct(double percent) {
    if (percent == m_maxNcpusPct) {
        return;
    }
    auto nicer = boinc::withNicerSettings(m_nicerOverride, percent);
    if (!nicer) {
        return; // nicer's own override is always readable; the volunteer's was checked when it came
    }
    m_maxNcpusPct = percent;
    m_nicerOverride = std::move(*nicer);
    pushOverride(transferLimits());
}

void BoincSession::checkOverride() {
    m_rpc->getGlobalPrefsOverride([this, alive = m_alive](Result<std::string> text) {
        if (!*alive || !text) {
            return; // an error shows in the next poll
        }
        if (boinc::hasNicerSettings(*text, m_maxNcpusPct)) {
            setOverrideApplied(true);
            return;
        }
        if (boinc::hasNicerSettings(*text, std::nullopt)) {
            // nicer's own, of the profile before (read before the change reached the client): sent again,
            // and never kept as the volunteer's.
            pushOverride(transferLimits());
            return;
        }
        // The volunteer replaced the override (the BOINC Manager writes the whole file): theirs is what comes
        // back later, and nicer's settings go on top of it again.
        setOverrideApplied(false);
        auto nicer = boinc::withNicerSettings(*text, m_maxNcpusPct);
        if (!nicer) {
            setState(api::BoincState::Error, "the preferences override set in BOINC is not readable (" +
                                                 nicer.error().message +
                                                 "); nicer cannot keep BOINC from suspending itself");
            return;
        }
        if (auto kept = boinc::rememberVolunteerOverride(m_options.client.dir, *text); !kept) {
            setState(api::BoincState::Error, kept.error().message);
            return;
        }
        m_nicerOverride = std::move(*nicer);
        pushOverride(transferLimits());
    });
}

void BoincSession::readLists() {
    const auto failed = [this](const Error& error) {
        m_polling = false;
        onRpcError(error);
    };
    m_rpc->getProjectStatus([this, alive = m_alive, failed](Result<std::vector<api::BoincProject>> projects) {
        if (!*alive) {
            return;
        }
        if (!projects) {
            return failed(projects.error());
        }
        m_status.projects = std::move(*projects);
        m_rpc->getResults([this, alive, failed](Result<std::vector<api::BoincTask>> tasks) {
            if (!*alive) {
                return;
            }
            if (!tasks) {
                return failed(tasks.error());
            }
            m_status.tasks = std::move(*tasks);
            applyLimits();
            m_rpc->getNotices(m_noticeSeqno, [this, alive, failed](Result<boinc::NoticeBatch> notices) {
                if (!*alive) {
                    return;
                }
                if (!notices) {
                    return failed(notices.error());
                }
                if (notices->refresh) {
                    m_notices.clear();
                }
                for (auto& n : notices->notices) {
                    m_noticeSeqno = std::max(m_noticeSeqno, n.seqno);
                    m_notices.push_back(std::move(n));
                }
                keepNewest(m_notices);
                m_rpc->getMessages(
                    m_messageSeqno, [this, alive, failed](Result<boinc::MessageBatch> messages) {
                        if (!*alive) {
                            return;
                        }
                        if (!messages) {
                            return failed(messages.error());
                        }
                        m_messageSeqno = messages->lastSeqno;
                        m_errors.insert(m_errors.end(), messages->errors.begin(), messages->errors.end());
                        keepNewest(m_errors);
                        m_status.notices = m_notices;
                        m_status.notices.insert(m_status.notices.end(), m_errors.begin(), m_errors.end());
                        std::stable_sort(m_status.notices.begin(), m_status.notices.end(), earlier);
                        keepNewest(m_status.notices);
                        m_polling = false;
                        keepClock();
                    });
            });
        });
    });
}

void BoincSession::onRpcError(const Error& error) {
    if (m_held || m_clock.isStopped()) {
        return; // frozen or stopped while the call was under way: not the client's fault
    }
    if (!m_answered && std::chrono::steady_clock::now() - m_startedAt < m_options.startupGrace) {
        setState(api::BoincState::Starting, "");
    } else {
        setState(api::BoincState::Error, error.message);
    }
}

void BoincSession::readLimits() {
    constexpr auto kBetweenReads = std::chrono::seconds(10);
    const auto now = std::chrono::steady_clock::now();
    if (m_limitsAsked || now - m_limitsAskedAt < kBetweenReads) {
        return;
    }
    m_limitsAsked = true;
    m_limitsAskedAt = now;
    m_rpc->getTaskLimits([this, alive = m_alive](Result<boinc::TaskLimitMap> limits) {
        if (!*alive) {
            return;
        }
        m_limitsAsked = false;
        if (limits) { // an error shows in the next poll
            m_limits = std::move(*limits);
            applyLimits();
        }
    });
}

void BoincSession::applyLimits() {
    bool missing = false;
    for (auto& task : m_status.tasks) {
        const auto limits = m_limits.find({task.projectUrl, task.name});
        task.elapsedLimitSeconds = limits != m_limits.end() ? limits->second.elapsedLimitSeconds : 0.0;
        missing = missing || (limits == m_limits.end() && task.state == api::BoincTaskState::Running);
    }
    if (missing) {
        readLimits();
    }
}

std::vector<ClockTask> BoincSession::runningTasks() const {
    std::vector<ClockTask> running;
    for (const auto& task : m_status.tasks) {
        const auto limits = m_limits.find({task.projectUrl, task.name});
        if (task.state == api::BoincTaskState::Running && limits != m_limits.end()) {
            running.push_back({task.projectUrl + " " + task.name, task.elapsedSeconds, task.cpuSeconds,
                               limits->second.cpus, limits->second.gpu});
        }
    }
    return running;
}

void BoincSession::keepClock() {
    if (!m_keepClock || !m_options.stopClient || m_held) {
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    // Only with nothing under way: a call the stopped client cannot answer would time out as an error.
    const bool busy = !m_operations.empty() || m_client->pendingCalls() > 0;
    if (m_clock.onTasks(now, runningTasks(), busy)) {
        if (auto stopped = m_options.stopClient(true); stopped) {
            m_clock.stopped(now);
            m_clockTimer.armIn(m_clock.options().stopSpan);
        } else {
            setClockText("cannot keep BOINC's clock: " + stopped.error().message);
            return;
        }
    }
    setClockText(m_clock.describe(now));
}

void BoincSession::continueClient() {
    if (!m_clock.isStopped()) {
        return;
    }
    m_clockTimer.disarm();
    if (m_held) {
        m_continueOnRelease = true; // a signal now would thaw it where freezing is SIGSTOP (cgroup v1)
    } else {
        (void)m_options.stopClient(false); // a client that is gone needs no continuing
    }
    const auto now = std::chrono::steady_clock::now();
    m_clock.continued(now);
    m_polls = 0; // the next poll reads the lists
    if (m_keepClock) {
        setClockText(m_clock.describe(now));
    }
}

void BoincSession::setClockText(std::string text) {
    if (text != m_status.clock) {
        m_status.clock = std::move(text);
        if (m_onStateChanged) {
            m_onStateChanged();
        }
    }
}

void BoincSession::setState(api::BoincState state, std::string detail) {
    if (state == m_status.state && detail == m_status.detail) {
        return;
    }
    m_status.state = state;
    m_status.detail = std::move(detail);
    if (m_onStateChanged) {
        m_onStateChanged();
    }
}

void BoincSession::setOverrideApplied(bool applied) {
    if (applied == m_status.overrideApplied) {
        return;
    }
    m_status.overrideApplied = applied;
    if (m_onStateChanged) {
        m_onStateChanged();
    }
}

std::shared_ptr<BoincSession::Waiting> BoincSession::wait(BoincRequests::Done done) {
    auto waiting = std::make_shared<Waiting>(Waiting{std::move(done)});
    std::erase_if(m_waiting, [](const std::weak_ptr<Waiting>& w) { return w.expired(); });
    m_waiting.push_back(waiting);
    return waiting;
}

void BoincSession::attach(const std::string& url, const std::string& key, BoincRequests::Done done) {
    if (auto ok = checkBoincAttach(url, key); !ok) {
        return done(ok.error());
    }
    continueClient(); // the volunteer's request first: a stopped client would not answer it
    auto waiting = wait(std::move(done));
    m_rpc->projectAttach(url, key, "", [this, alive = m_alive, waiting](const Result<void>& started) {
        if (!*alive) {
            return;
        }
        if (!started) {
            return waiting->finish(Error{"BOINC did not attach: " + started.error().message});
        }
        follow(
            [this](boinc::BoincRpc::Done<boinc::OperationPoll> d) { m_rpc->projectAttachPoll(std::move(d)); },
            waiting);
    });
}

void BoincSession::attachAccountManager(const std::string& url, const std::string& name,
                                        const std::string& password, BoincRequests::Done done) {
    if (auto ok = checkBoincAccountManager(url, name, password); !ok) {
        return done(ok.error());
    }
    continueClient(); // the volunteer's request first: a stopped client would not answer it
    auto waiting = wait(std::move(done));
    m_rpc->acctMgrRpc(url, name, password, [this, alive = m_alive, waiting](const Result<void>& started) {
        if (!*alive) {
            return;
        }
        if (!started) {
            return waiting->finish(
                Error{"BOINC did not join the account manager: " + started.error().message});
        }
        follow([this](boinc::BoincRpc::Done<boinc::OperationPoll> d) { m_rpc->acctMgrRpcPoll(std::move(d)); },
               waiting);
    });
}

void BoincSession::detach(const std::string& url, BoincRequests::Done done) {
    if (auto ok = checkBoincProjectUrl(url); !ok) {
        return done(ok.error());
    }
    continueClient(); // the volunteer's request first: a stopped client would not answer it
    auto waiting = wait(std::move(done));
    m_rpc->projectDetach(url, [this, alive = m_alive, waiting](const Result<void>& detached) {
        if (!*alive) {
            return;
        }
        m_polls = 0; // the next poll reads the lists
        waiting->finish(detached ? Result<void>{}
                                 : Result<void>{Error{"BOINC did not detach: " + detached.error().message}});
    });
}

void BoincSession::follow(std::function<void(boinc::BoincRpc::Done<boinc::OperationPoll>)> poll,
                          std::shared_ptr<Waiting> waiting) {
    auto operation = std::make_shared<Operation>();
    operation->poll = std::move(poll);
    operation->waiting = std::move(waiting);
    operation->pollsLeft = static_cast<int>(std::max<std::int64_t>(
        1, std::chrono::milliseconds(api::kBoincOperationLimit) / m_options.pollInterval));
    m_operations.push_back(std::move(operation));
}

void BoincSession::followOperations() {
    for (const auto& operation : m_operations) {
        if (operation->asked) {
            continue;
        }
        operation->asked = true;
        operation->poll([this, alive = m_alive, operation](Result<boinc::OperationPoll> state) {
            if (!*alive) {
                return;
            }
            operation->asked = false;
            Result<void> outcome;
            if (!state) {
                outcome = state.error();
            } else if (state->inProgress() && --operation->pollsLeft > 0) {
                return; // asked again at the next poll
            } else if (state->inProgress()) {
                outcome = Error{"BOINC has not finished after " +
                                std::to_string(api::kBoincOperationLimit.count()) +
                                " s; see `nicer boinc` for its notices"};
            } else if (!state->succeeded()) {
                outcome = Error{state->describe()};
            }
            std::erase(m_operations, operation);
            m_polls = 0; // the next poll reads the lists
            operation->waiting->finish(std::move(outcome));
        });
    }
}

} // namespace nicer::daemon
