#include "workhost/WorkHost.h"

#include "util/Text.h"
#include "util/TextFile.h"
#include "util/UniqueFd.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nicer::workhost {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

/// Milliseconds from now to @p until, for poll(): at least 0, and 1 more so that a wait never ends early.
int msUntil(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left + 1, 0, 60'000));
}

bool populated(const fs::path& dir) {
    auto events = readTextFile(dir / "cgroup.events");
    return !events || events->find("populated 1") != std::string::npos;
}

std::string describeStatus(int status) {
    if (WIFEXITED(status)) {
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        const char* name = sigabbrev_np(WTERMSIG(status));
        return std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(status)).c_str());
    }
    return "ended";
}

} // namespace

void refuseConnection(int listener) {
    UniqueFd other(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (other) {
        (void)sendMessage(other.get(), {Verb::Refused,
                                        {"another nicerd of this user holds the work host; one nicerd runs "
                                         "the work of a user"}});
    }
}

Result<void> writeCgroupFile(const fs::path& file, const std::string& value) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error{"cannot open " + file.string() + ": " + std::strerror(errno)};
    }
    const ssize_t n = ::write(fd, value.data(), value.size());
    const int error = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(value.size())) {
        return Error{"cannot write '" + value + "' to " + file.string() + ": " + std::strerror(error)};
    }
    return {};
}

void WorkHost::signalAll(const fs::path& dir, int signal) const {
    (void)m_layout.signalAll("/" + dir.lexically_relative(*m_layout.unifiedRoot()).string(), signal);
}

void WorkHost::killCgroup(const fs::path& dir) const {
    if (!writeCgroupFile(dir / "cgroup.kill", "1")) {
        signalAll(dir, SIGKILL);
    }
}

bool waitUntilEmpty(const fs::path& dir, std::chrono::milliseconds wait) {
    const auto until = Clock::now() + wait;
    // The kernel marks cgroup.events modified when "populated" changes: inotify wakes the wait then.
    const UniqueFd watch(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    const bool watched =
        watch && ::inotify_add_watch(watch.get(), (dir / "cgroup.events").c_str(), IN_MODIFY) >= 0;
    while (populated(dir) && Clock::now() < until) {
        if (!watched) {
            // No inotify (out of watches, or no such file): the file is read again every 10 ms.
            ::poll(nullptr, 0, std::min(msUntil(until), 10));
            continue;
        }
        pollfd fd{watch.get(), POLLIN, 0};
        if (::poll(&fd, 1, msUntil(until)) > 0) {
            char events[4096];
            while (::read(watch.get(), events, sizeof events) > 0) {
            }
        }
    }
    return !populated(dir);
}

void removeCgroup(const fs::path& dir, std::chrono::milliseconds wait) {
    if (wait.count() > 0) {
        (void)waitUntilEmpty(dir, wait);
    }
    std::error_code ec;
    std::vector<fs::path> children;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec)) {
            children.push_back(it->path());
        }
    }
    for (const auto& child : children) {
        removeCgroup(child, std::chrono::milliseconds(0));
    }
    ::rmdir(dir.c_str());
}

WorkHost::WorkHost(kernel::CgroupLayout layout, fs::path unit, std::string workCgroup)
    : m_layout(std::move(layout))
    , m_unit(std::move(unit))
    , m_work(m_unit / "work")
    , m_workCgroup(std::move(workCgroup)) {}

Result<WorkHost> WorkHost::prepare(kernel::CgroupLayout layout, const std::string& cgroup, bool needsCpu) {
    if (!layout.unifiedRoot()) {
        return Error{"this machine has no cgroup v2 tree, where the work host runs the work"};
    }
    const fs::path unitCgroup = *layout.unifiedRoot() / cgroup.substr(1);
    WorkHost host(std::move(layout), unitCgroup, cgroup + "/work");
    std::error_code ec;
    // Leaves left by a host that was killed (systemd emptied them when it stopped the unit).
    for (const char* leaf : {"work", "host"}) {
        if (fs::is_directory(unitCgroup / leaf, ec)) {
            removeCgroup(unitCgroup / leaf, std::chrono::milliseconds(0));
        }
    }
    if (!fs::create_directory(unitCgroup / "host", ec) && ec) {
        return Error{"cannot create the host's cgroup in " + unitCgroup.string() + ": " + ec.message() +
                     " (is the unit's cgroup delegated to this user? Delegate= in nicer-work@.service)"};
    }
    if (auto moved = writeCgroupFile(unitCgroup / "host" / "cgroup.procs", "0"); !moved) {
        return moved.error();
    }
    auto available = readTextFile(unitCgroup / "cgroup.controllers");
    if (!available) {
        return available.error();
    }
    std::vector<std::string_view> controllers;
    std::string_view rest = *available;
    for (auto word = text::nextToken(rest); !word.empty(); word = text::nextToken(rest)) {
        controllers.push_back(text::trim(word));
    }
    if (needsCpu && std::find(controllers.begin(), controllers.end(), "cpu") == controllers.end()) {
        return Error{"the cpu controller is not available in " + unitCgroup.string() +
                     " (it is on a cgroup v1 hierarchy, or not delegated: Delegate=cpu memory pids)"};
    }
    for (const char* controller : {"cpu", "memory", "pids"}) {
        if (std::find(controllers.begin(), controllers.end(), controller) != controllers.end()) {
            if (auto enabled =
                    writeCgroupFile(unitCgroup / "cgroup.subtree_control", std::string("+") + controller);
                !enabled) {
                return enabled.error();
            }
        }
    }
    if (!fs::create_directory(host.m_work, ec) && ec) {
        return Error{"cannot create the work's cgroup " + host.m_work.string() + ": " + ec.message()};
    }
    if (needsCpu && !fs::exists(host.m_work / "cpu.max", ec)) {
        return Error{host.m_work.string() + " has no cpu.max: the kernel cannot cap the work there"};
    }
    return host;
}

std::optional<Message> WorkHost::start(const StartRequest& r) {
    if (m_instances.count(r.name) != 0) {
        return Message{Verb::Failed, {r.name, "an instance named " + r.name + " is running already"}};
    }
    const fs::path leaf = leafOf(r.name);
    std::error_code ec;
    if (fs::exists(leaf, ec)) {
        killCgroup(leaf);
        removeCgroup(leaf, std::chrono::seconds(1));
    }
    if (!fs::create_directory(leaf, ec)) {
        return Message{Verb::Failed,
                       {r.name, "cannot create the cgroup " + leaf.string() + ": " + ec.message()}};
    }
    // The child reports a failed exec through a pipe that closes on a successful one.
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        return Message{Verb::Failed, {r.name, std::string("pipe: ") + std::strerror(errno)}};
    }
    std::vector<char*> argv;
    for (const auto& a : r.argv) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : r.environment) {
        envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
    const std::string procs = (leaf / "cgroup.procs").string();

    const pid_t pid = ::fork();
    if (pid == 0) {
        const auto fail = [&](const char* step) {
            const std::string text = std::string(step) + ": " + std::strerror(errno);
            (void)!::write(pipeFds[1], text.data(), text.size());
            ::_exit(127);
        };
        const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ::write(fd, "0", 1) != 1) {
            fail("cannot enter its cgroup");
        }
        ::close(fd);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::setsid();
        errno = 0;
        if (::setpriority(PRIO_PROCESS, 0, r.nice) != 0) {
            fail("cannot set its nice level");
        }
        if (!r.workingDirectory.empty() && ::chdir(r.workingDirectory.c_str()) != 0) {
            fail(("cannot enter its working directory " + r.workingDirectory).c_str());
        }
        ::execve(r.executable.c_str(), argv.data(), envp.data());
        fail(("cannot run " + r.executable).c_str());
    }
    ::close(pipeFds[1]);
    if (pid < 0) {
        ::close(pipeFds[0]);
        removeCgroup(leaf, std::chrono::milliseconds(0));
        return Message{Verb::Failed, {r.name, std::string("fork: ") + std::strerror(errno)}};
    }
    m_instances[r.name] = Instance{pid, UniqueFd(pipeFds[0]), std::nullopt};
    return std::nullopt;
}

void WorkHost::finishStart(int link, const std::string& name) {
    auto it = m_instances.find(name);
    if (it == m_instances.end() || !it->second.startPipe) {
        return;
    }
    std::string why(512, '\0');
    ssize_t n = 0;
    while ((n = ::read(it->second.startPipe.get(), why.data(), why.size())) < 0 && errno == EINTR) {
    }
    it->second.startPipe.reset();
    if (n <= 0) {
        if (link >= 0) {
            (void)sendMessage(link, {Verb::Started, {name, std::to_string(it->second.pid)}});
        }
        return;
    }
    why.resize(static_cast<std::size_t>(n));
    ::waitpid(it->second.pid, nullptr, 0);
    removeCgroup(leafOf(name), std::chrono::seconds(1));
    m_instances.erase(it);
    if (link >= 0) {
        (void)sendMessage(link, {Verb::Failed, {name, why}});
    }
}

void WorkHost::stop(const std::string& name, std::chrono::seconds grace) {
    auto it = m_instances.find(name);
    if (it == m_instances.end() || it->second.killAt) {
        return;
    }
    // SIGCONT after SIGTERM, as systemd does: a stopped process handles its SIGTERM once it continues.
    signalAll(leafOf(name), SIGTERM);
    signalAll(leafOf(name), SIGCONT);
    it->second.killAt = Clock::now() + grace;
}

void WorkHost::killOverdue() {
    const auto now = Clock::now();
    for (auto& [name, instance] : m_instances) {
        if (instance.killAt && now >= *instance.killAt) {
            killCgroup(leafOf(name));
        }
    }
}

std::optional<int> WorkHost::pollTimeoutMs() const {
    std::optional<Clock::time_point> next;
    for (const auto& [name, instance] : m_instances) {
        if (instance.killAt && (!next || *instance.killAt < *next)) {
            next = instance.killAt;
        }
    }
    if (!next) {
        return std::nullopt;
    }
    return msUntil(*next);
}

void WorkHost::reap(int link) {
    int status = 0;
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
        auto it = std::find_if(m_instances.begin(), m_instances.end(),
                               [pid](const auto& entry) { return entry.second.pid == pid; });
        if (it == m_instances.end()) {
            continue; // an orphan of the work, reaped as its subreaper
        }
        const std::string name = it->first;
        if (it->second.startPipe) {
            // Ended before its answer was read: the pipe holds why, or EOF (it ran, and ended at once).
            finishStart(link, name);
            it = m_instances.find(name);
            if (it == m_instances.end()) {
                continue;
            }
        }
        // As a service ends: what the instance started dies with it.
        killCgroup(leafOf(name));
        removeCgroup(leafOf(name), std::chrono::seconds(1));
        m_instances.erase(it);
        if (link >= 0) {
            (void)sendMessage(link, {Verb::Exited, {name, describeStatus(status)}});
        }
    }
}

Result<void> WorkHost::handle(int link, const Message& message) {
    if (message.verb == Verb::Start) {
        auto request = parseStart(message);
        if (!request) {
            const std::string name = message.fields.empty() ? std::string() : message.fields.front();
            return sendMessage(link, {Verb::Failed, {name, request.error().message}});
        }
        if (auto answer = start(*request)) {
            return sendMessage(link, *answer);
        }
        return {};
    }
    if (message.verb == Verb::Stop && message.has(1)) {
        const auto& name = message.fields.front();
        if (m_instances.count(name) == 0) {
            return sendMessage(link, {Verb::Exited, {name, "not running"}});
        }
        stop(name, kStopGrace);
        return {};
    }
    return Error{"nicerd sent a message the host does not take: '" + std::string(verbKeyword(message.verb)) +
                 "' with " + std::to_string(message.fields.size()) + " fields"};
}

UniqueFd WorkHost::blockSignals() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGCHLD}) {
        sigaddset(&signals, s);
    }
    ::sigprocmask(SIG_BLOCK, &signals, nullptr);
    return UniqueFd(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
}

Result<void> WorkHost::serve(int link, int listener, int signalFd) {
    // Orphans of the work (a daemonized child) come to this process, not to the system manager.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    Result<void> outcome;
    bool serving = true;
    while (serving) {
        std::vector<pollfd> fds = {{link, POLLIN, 0}, {signalFd, POLLIN, 0}, {listener, POLLIN, 0}};
        std::vector<std::string> starting;
        for (const auto& [name, instance] : m_instances) {
            if (instance.startPipe) {
                fds.push_back({instance.startPipe.get(), POLLIN, 0});
                starting.push_back(name);
            }
        }
        const int timeout = pollTimeoutMs().value_or(-1);
        if (::poll(fds.data(), fds.size(), timeout) < 0) {
            if (errno == EINTR) {
                continue;
            }
            outcome = Error{std::string("poll: ") + std::strerror(errno)};
            break;
        }
        for (std::size_t i = 0; i < starting.size(); ++i) {
            if (fds[3 + i].revents != 0) {
                finishStart(link, starting[i]);
            }
        }
        if (fds[1].revents & POLLIN) {
            signalfd_siginfo info{};
            while (::read(signalFd, &info, sizeof info) == sizeof info) {
                if (info.ssi_signo != SIGCHLD) {
                    serving = false;
                }
            }
            reap(link);
        }
        if (fds[2].revents & POLLIN) {
            refuseConnection(listener);
        }
        if (serving && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            auto message = receiveMessage(link);
            if (!message || !*message) {
                outcome = message ? Result<void>{} : Result<void>(message.error());
                break;
            }
            if (auto handled = handle(link, **message); !handled) {
                outcome = handled;
                break;
            }
        }
        killOverdue();
    }
    // nicerd is gone or the unit is stopping: the work ends with the link, thawed so that SIGTERM is handled,
    // and killed after the grace.
    (void)writeCgroupFile(m_work / "cgroup.freeze", "0");
    std::vector<std::string> names;
    for (const auto& [name, instance] : m_instances) {
        names.push_back(name);
    }
    for (const auto& name : names) {
        stop(name, kShutdownGrace);
    }
    // A start still waiting for its exec is not read any more (its child may hang before it): it is stopped.
    for (auto& [name, instance] : m_instances) {
        instance.startPipe.reset();
    }
    // Each child's end wakes the wait through the signal descriptor (SIGCHLD), until the grace is over.
    const auto until = Clock::now() + kShutdownGrace;
    while (!m_instances.empty() && Clock::now() < until) {
        pollfd fd{signalFd, POLLIN, 0};
        if (::poll(&fd, 1, msUntil(until)) > 0) {
            signalfd_siginfo info{};
            while (::read(signalFd, &info, sizeof info) == sizeof info) {
            }
        }
        reap(-1);
    }
    killCgroup(m_work);
    reap(-1);
    removeCgroup(m_work, std::chrono::seconds(2));
    return outcome;
}

} // namespace nicer::workhost
