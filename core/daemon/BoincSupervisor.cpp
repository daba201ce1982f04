#include "daemon/BoincSupervisor.h"

#include "boinc/ClientDirectory.h"
#include "workload/BoincCommand.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

namespace nicer::daemon {

namespace {

/// Where @p spec's BOINC client keeps its state, when it runs one that nicer can govern.
std::optional<std::filesystem::path> boincDirOf(const workload::WorkloadSpec& spec) {
    auto client = workload::boincClientOf(spec.argv);
    return client && *client ? std::optional((*client)->dir) : std::nullopt;
}

/// Stops or continues the BOINC client among @p pids: the process named "boinc" (its tasks are its children,
/// under their own names). It runs as the volunteer, as nicerd does, in either placement.
Result<void> signalClient(const std::vector<pid_t>& pids, bool stop) {
    const auto named = [](pid_t pid, std::string_view name) {
        std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
        std::string line;
        return std::getline(comm, line) && line == name;
    };
    for (const pid_t pid : pids) {
        if (named(pid, "boinc")) {
            if (::kill(pid, stop ? SIGSTOP : SIGCONT) != 0) {
                return Error{std::string("cannot ") + (stop ? "stop" : "continue") +
                             " the BOINC client (pid " + std::to_string(pid) + "): " + std::strerror(errno)};
            }
            return {};
        }
    }
    return Error{"the BOINC client's process (boinc) is not among the work's"};
}

constexpr const char* kNoBoincClient = "no BOINC client runs under nicerd: choose the boinc workload first";

/// Whether the system-wide client is looked for again: it is enabled or disabled rarely.
constexpr int kPeriodsBetweenLooks = 30;

} // namespace

BoincSupervisor::BoincSupervisor(sd_event* event, std::function<void()> changed)
    : m_event(event)
    , m_changed(std::move(changed))
    , m_probe(event) {}

Result<void> BoincSupervisor::prepare(const workload::WorkloadSpec& spec) {
    const auto dir = boincDirOf(spec);
    if (!dir) {
        return {};
    }
    if (auto prepared = boinc::prepareClientDirectory(*dir); !prepared) {
        return Error{"the BOINC client cannot start under nicer: " + prepared.error().message};
    }
    return {};
}

void BoincSupervisor::start(const workload::WorkloadSpec& spec, WorkPids workPids) {
    m_session.reset();
    m_error.clear();
    auto client = workload::boincClientOf(spec.argv);
    if (!client) {
        // A custom command that runs BOINC in a way nicer cannot follow: it runs, ungoverned, and says so.
        m_error = client.error().message;
    } else if (*client) {
        BoincSession::Options options;
        options.client = **client;
        options.stopClient = [workPids](bool stop) { return signalClient(workPids(), stop); };
        options.clientPids = std::move(workPids);
        auto session = BoincSession::start(m_event, std::move(options), [this] { notify(); });
        if (session) {
            m_session = std::move(*session);
        } else {
            m_error = session.error().message;
        }
    }
    notify();
}

void BoincSupervisor::stop() {
    m_session.reset();
}

Result<void> BoincSupervisor::restore(const workload::WorkloadSpec& stopped,
                                      const workload::WorkloadSpec* running) {
    const auto dir = boincDirOf(stopped);
    if (!dir || (running && boincDirOf(*running) == dir)) {
        return {}; // no BOINC client, or the one running now uses the same directory
    }
    if (auto restored = boinc::restoreVolunteerOverride(*dir); !restored) {
        return Error{"BOINC: " + restored.error().message};
    }
    return {};
}

void BoincSupervisor::onPeriod(const api::Sample& last, bool keepClock, double maxNcpusPct) {
    if (m_session) {
        m_session->setKeepClock(keepClock);
        m_session->setMaxNcpusPct(maxNcpusPct);
        const bool held = last.paused || last.quota <= 0.0;
        m_session->setHeld(held, last.paused ? "paused: nicer holds the work until you resume it"
                                 : last.outsideSignal
                                     ? "held: other users and services need every CPU, nicer holds the work"
                                     : "held: your programs need every CPU, nicer holds the work");
    }
    if (++m_periods % kPeriodsBetweenLooks == 0) {
        lookForSystemService();
    }
}

void BoincSupervisor::lookForSystemService() {
    m_probe.look([this](std::string advice) { setSystemService(std::move(advice)); });
}

void BoincSupervisor::setSystemService(std::string advice) {
    if (advice.compare(m_systemService) != 0) {
        m_systemService = std::move(advice);
        notify();
    }
}

api::BoincStatus BoincSupervisor::status() const {
    api::BoincStatus status = m_session ? m_session->status() : api::BoincStatus{};
    if (!m_session && !m_error.empty()) {
        status.state = api::BoincState::Error;
        status.detail = m_error;
    }
    status.systemService = m_systemService;
    return status;
}

void BoincSupervisor::attach(const std::string& url, const std::string& key, BoincRequests::Done done) {
    if (!m_session) {
        return done(Error{kNoBoincClient});
    }
    m_session->attach(url, key, std::move(done));
}

void BoincSupervisor::attachAccountManager(const std::string& url, const std::string& name,
                                           const std::string& password, BoincRequests::Done done) {
    if (!m_session) {
        return done(Error{kNoBoincClient});
    }
    m_session->attachAccountManager(url, name, password, std::move(done));
}

void BoincSupervisor::detach(const std::string& url, BoincRequests::Done done) {
    if (!m_session) {
        return done(Error{kNoBoincClient});
    }
    m_session->detach(url, std::move(done));
}

void BoincSupervisor::notify() const {
    if (m_changed) {
        m_changed();
    }
}

} // namespace nicer::daemon
