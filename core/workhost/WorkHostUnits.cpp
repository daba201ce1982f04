#include "workhost/WorkHostUnits.h"

#include "util/Text.h"
#include "workhost/WorkHost.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char** environ;

namespace nicer::workhost {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using usermanager::ExecCommand;
using usermanager::Properties;
using usermanager::Property;

namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

std::string userName() {
    const passwd* pw = ::getpwuid(::getuid());
    return pw ? pw->pw_name : std::string();
}

Result<UniqueFd> listenAt(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    ::chmod(path.parent_path().c_str(), 0700);
    ::unlink(path.c_str());
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (!fd || path.native().size() >= sizeof address.sun_path) {
        return Error{"cannot create the work host's socket " + path.string() + ": " + std::strerror(errno)};
    }
    std::strcpy(address.sun_path, path.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd.get(), 1) != 0) {
        return Error{"cannot listen on " + path.string() + ": " + std::strerror(errno)};
    }
    return fd;
}

bool readable(int fd, std::chrono::milliseconds wait) {
    pollfd p{fd, POLLIN, 0};
    const auto until = Clock::now() + wait;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
        if (r > 0) {
            return true;
        }
        if (r == 0 || errno != EINTR) {
            return false;
        }
    }
}

} // namespace

Result<std::unique_ptr<WorkHostUnits>>
WorkHostUnits::connect(usermanager::UnitManager& user, std::unique_ptr<usermanager::UnitManager> system,
                       Names names, std::chrono::milliseconds wait) {
    const std::string name = userName();
    const std::string unit = workUnitFor(name);
    if (unit.empty()) {
        return Error{"the user name '" + name + "' cannot name an instance of " + kWorkTemplate};
    }
    auto file = system->unitFile(unit);
    if (!file) {
        return Error{"the system manager cannot be asked about " + unit + ": " + file.error().message};
    }
    if (file->empty()) {
        return Error{std::string(kWorkTemplate) +
                     " is not installed on this system (nicer's .deb installs it, " + "with the system's " +
                     kIdleSlice + " and the polkit rule that lets you start your own)"};
    }
    auto units = std::unique_ptr<WorkHostUnits>(
        new WorkHostUnits(user, std::move(system), std::move(names), unit, wait));
    auto listener = listenAt(workHostSocket(::getuid()));
    if (!listener) {
        return listener.error();
    }
    units->m_listener = std::move(*listener);
    if (auto hosted = units->ensureHost(); !hosted) {
        return hosted.error();
    }
    return units;
}

WorkHostUnits::WorkHostUnits(usermanager::UnitManager& user, std::unique_ptr<usermanager::UnitManager> system,
                             Names names, std::string unit, std::chrono::milliseconds wait)
    : m_user(user)
    , m_system(std::move(system))
    , m_names(std::move(names))
    , m_unit(std::move(unit))
    , m_wait(wait) {}

WorkHostUnits::~WorkHostUnits() {
    // Closing the link is the host's signal to stop the work and end; the unit then goes inactive by itself.
    m_link.reset();
    ::unlink(workHostSocket(::getuid()).c_str());
}

bool WorkHostUnits::isInstance(const std::string& name) const {
    const std::string prefix = m_names.instancePrefix + "-";
    return name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 8 &&
           name.compare(name.size() - 8, 8, ".service") == 0;
}

Result<void> WorkHostUnits::ensureHost() {
    if (m_link) {
        return {};
    }
    // A host that is still stopping finishes first: the start job waits for the stop.
    if (auto started = m_system->startUnit(m_unit, true); !started) {
        return Error{"the system manager refused to start " + m_unit + " (" + started.error().message +
                     "); the polkit rule /usr/share/polkit-1/rules.d/60-nicer.rules allows it for its user"};
    }
    if (!readable(m_listener.get(), m_wait)) {
        return Error{m_unit + " started, but its host did not connect within " +
                     std::to_string(m_wait.count()) + " ms: see journalctl -u " + m_unit};
    }
    UniqueFd link(::accept4(m_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    ucred peer{};
    socklen_t length = sizeof peer;
    if (!link || ::getsockopt(link.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
        return Error{"cannot accept the work host's connection: " + std::string(std::strerror(errno))};
    }
    if (peer.uid != ::getuid()) {
        return Error{"a process of uid " + std::to_string(peer.uid) + " connected as the work host; refused"};
    }
    if (!readable(link.get(), m_wait)) {
        return Error{m_unit + "'s host connected but said nothing within " + std::to_string(m_wait.count()) +
                     " ms"};
    }
    auto hello = receiveMessage(link.get());
    if (!hello) {
        return hello.error();
    }
    if (hello->size() == 2 && (*hello)[0] == "refused") {
        return Error{m_unit + " cannot run the work: " + (*hello)[1]};
    }
    if (hello->size() != 2 || (*hello)[0] != "hello" || (*hello)[1].empty() || (*hello)[1].front() != '/') {
        return Error{m_unit + "'s host did not greet as expected"};
    }
    m_link = std::move(link);
    m_workCgroup = (*hello)[1];
    for (const auto& [file, value] : m_leafFiles) {
        if (auto written = writeLeafFile(file, value); !written) {
            return written;
        }
    }
    return {};
}

void WorkHostUnits::hostGone() {
    m_link.reset();
    for (auto& [name, instance] : m_instances) {
        if (instance.state == "active") {
            instance.state = "failed";
        }
    }
}

void WorkHostUnits::handle(const Message& message) {
    const std::string& verb = message.front();
    if (message.size() >= 3 && (verb == "started" || verb == "failed")) {
        m_answers[message[1]] = verb == "started" ? "started" : "failed: " + message[2];
        std::uint32_t pid = 0;
        if (verb == "started" && text::parseNumber(message[2], pid)) {
            m_instances[message[1]] = Instance{"active", pid};
        }
    } else if (message.size() >= 3 && verb == "exited") {
        auto& instance = m_instances[message[1]];
        instance.state = message[2].rfind("exited with status 0", 0) == 0 ? "inactive" : "failed";
        instance.pid = 0;
    }
}

Result<void> WorkHostUnits::receive(std::optional<std::chrono::milliseconds> wait) {
    while (m_link && readable(m_link.get(), wait.value_or(std::chrono::milliseconds(0)))) {
        auto message = receiveMessage(m_link.get());
        if (!message || message->empty()) {
            hostGone();
            return message ? Error{m_unit + "'s host ended"} : Result<void>(message.error());
        }
        handle(*message);
        wait.reset(); // one waited for; the rest only as far as they are there
    }
    return {};
}

Result<void> WorkHostUnits::writeLeafFile(const std::string& file, const std::string& value) {
    m_leafFiles[file] = value;
    if (!m_link) {
        return {}; // written when the host is back
    }
    return writeCgroupFile(fs::path(kCgroupRoot) / m_workCgroup.substr(1) / file, value);
}

Result<void> WorkHostUnits::applyProperty(const Property& p) {
    const auto* number = std::get_if<std::uint64_t>(&p.value);
    const auto limit = [](std::uint64_t v) {
        return v == UINT64_MAX ? std::string("max") : std::to_string(v);
    };
    if (p.name == "CPUQuotaPerSecUSec" || p.name == "CPUQuotaPeriodUSec") {
        (p.name == "CPUQuotaPerSecUSec" ? m_quotaPerSecUSec : m_quotaPeriodUSec) = number ? *number : 0;
        const std::string quota = m_quotaPerSecUSec == UINT64_MAX
                                      ? "max"
                                      : std::to_string(std::max<std::uint64_t>(
                                            1000, m_quotaPerSecUSec * m_quotaPeriodUSec / 1'000'000));
        return writeLeafFile("cpu.max", quota + " " + std::to_string(m_quotaPeriodUSec));
    }
    if (p.name == "CPUWeight" && number) {
        // The slice above has cpu.idle 1 for everyone's work; the leaf follows what the actuator asks.
        return *number == 0 ? writeLeafFile("cpu.idle", "1")
                            : writeLeafFile("cpu.weight", std::to_string(*number));
    }
    if ((p.name == "MemoryHigh" || p.name == "MemoryMax") && number) {
        return writeLeafFile(p.name == "MemoryHigh" ? "memory.high" : "memory.max", limit(*number));
    }
    if (p.name == "Description" || p.name == "CPUAccounting") {
        return {}; // the kernel accounts every v2 cgroup's CPU time
    }
    return Error{"the root idle slice cannot take the property " + p.name};
}

Result<void> WorkHostUnits::startTransientUnit(const std::string& name, const Properties& props, bool wait) {
    if (isSlice(name)) {
        return setUnitProperties(name, props);
    }
    if (!isInstance(name)) {
        for (const auto& p : props) {
            if (p.name == "PIDs" || p.name == "Slice") {
                return Error{"processes cannot be moved into the root idle slice from the user manager: " +
                             name + " is not started"};
            }
        }
        return m_user.startTransientUnit(name, props, wait);
    }
    StartRequest request;
    request.name = name;
    for (const auto& p : props) {
        if (const auto* exec = std::get_if<std::vector<ExecCommand>>(&p.value);
            exec && p.name == "ExecStart") {
            if (exec->size() != 1) {
                return Error{name + ": the work host runs one command per instance"};
            }
            request.executable = exec->front().path;
            request.argv = exec->front().argv;
        } else if (const auto* nice = std::get_if<std::int32_t>(&p.value); nice && p.name == "Nice") {
            request.nice = *nice;
        }
    }
    if (request.argv.empty()) {
        return Error{name + ": no ExecStart to run"};
    }
    // The work sees what it would see as a service of the user manager: nicerd's environment is the
    // manager's, and its working directory the home directory.
    // The variables systemd gives nicerd's own unit are not the work's (its journal stream, notify socket,
    // invocation): the host's unit has its own.
    static constexpr std::string_view kUnitOwn[] = {
        "NOTIFY_SOCKET=",  "LISTEN_PID=", "LISTEN_FDS=",   "LISTEN_FDNAMES=", "INVOCATION_ID=",
        "JOURNAL_STREAM=", "MANAGERPID=", "WATCHDOG_PID=", "WATCHDOG_USEC=",  "SYSTEMD_EXEC_PID="};
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        if (std::none_of(std::begin(kUnitOwn), std::end(kUnitOwn),
                         [&](std::string_view own) { return entry.substr(0, own.size()) == own; })) {
            request.environment.emplace_back(entry);
        }
    }
    if (const char* home = std::getenv("HOME")) {
        request.workingDirectory = home;
    }
    if (auto hosted = ensureHost(); !hosted) {
        return hosted;
    }
    (void)receive();
    m_answers.erase(name);
    if (auto sent = sendMessage(m_link.get(), startMessage(request)); !sent) {
        hostGone();
        return sent;
    }
    const auto until = Clock::now() + m_wait;
    while (m_answers.count(name) == 0 && m_link && Clock::now() < until) {
        if (auto got = receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
            !got) {
            return got;
        }
    }
    const auto answer =
        m_answers.count(name) ? m_answers[name] : std::string("failed: no answer from the host");
    m_answers.erase(name);
    if (answer != "started") {
        m_instances[name] = Instance{"failed", 0};
        return Error{"cannot start " + name + " in " + m_unit + ": " + answer.substr(8)};
    }
    return {};
}

Result<void> WorkHostUnits::startUnit(const std::string& name, bool wait) {
    if (isSlice(name)) {
        return ensureHost();
    }
    return m_user.startUnit(name, wait);
}

Result<void> WorkHostUnits::setUnitProperties(const std::string& name, const Properties& props) {
    if (!isSlice(name)) {
        return m_user.setUnitProperties(name, props);
    }
    for (const auto& p : props) {
        if (auto applied = applyProperty(p); !applied) {
            return applied;
        }
    }
    return {};
}

Result<void> WorkHostUnits::stopUnit(const std::string& name, bool wait) {
    if (isSlice(name)) {
        Result<void> first;
        for (auto& [instance, state] : m_instances) {
            if (auto stopped = stopUnit(instance, wait); !stopped && first) {
                first = stopped;
            }
        }
        return first;
    }
    if (!isInstance(name)) {
        return m_user.stopUnit(name, wait);
    }
    (void)receive();
    auto it = m_instances.find(name);
    if (it == m_instances.end() || it->second.state != "active" || !m_link) {
        return {};
    }
    if (auto sent = sendMessage(m_link.get(), {"stop", name}); !sent) {
        hostGone();
        return {};
    }
    const auto until = Clock::now() + std::chrono::seconds(15);
    while (wait && m_link && m_instances[name].state == "active" && Clock::now() < until) {
        (void)receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
    }
    if (wait && m_link && m_instances[name].state == "active") {
        return Error{"the work host did not stop " + name + " within 15 s"};
    }
    return {};
}

Result<void> WorkHostUnits::freezeUnit(const std::string& name) {
    if (isSlice(name)) {
        return Error{
            "the root idle slice has no unit to freeze; its leaf's cgroup.freeze is written instead"};
    }
    return m_user.freezeUnit(name);
}

Result<void> WorkHostUnits::thawUnit(const std::string& name) {
    if (isSlice(name)) {
        return writeLeafFile("cgroup.freeze", "0");
    }
    return m_user.thawUnit(name);
}

Result<void> WorkHostUnits::killUnit(const std::string& name, int signal) {
    if (isSlice(name) || isInstance(name)) {
        return Error{"the system manager's units cannot be signalled from nicerd (" + std::to_string(signal) +
                     " to " + name + "); the leaf's cgroup.freeze holds the work instead"};
    }
    return m_user.killUnit(name, signal);
}

Result<void> WorkHostUnits::resetFailedUnit(const std::string& name) {
    if (isSlice(name) || isInstance(name)) {
        return {};
    }
    return m_user.resetFailedUnit(name);
}

Result<std::string> WorkHostUnits::activeState(const std::string& name) {
    if (isSlice(name)) {
        (void)receive();
        return std::string(m_link ? "active" : "inactive");
    }
    if (isInstance(name)) {
        (void)receive();
        auto it = m_instances.find(name);
        return it == m_instances.end() ? std::string("inactive") : it->second.state;
    }
    return m_user.activeState(name);
}

Result<std::string> WorkHostUnits::controlGroup(const std::string& name) {
    if (isSlice(name)) {
        return m_workCgroup;
    }
    if (isInstance(name)) {
        return m_workCgroup + "/" + name;
    }
    return m_user.controlGroup(name);
}

Result<std::string> WorkHostUnits::unitFile(const std::string& name) {
    if (isSlice(name) || isInstance(name)) {
        return std::string();
    }
    return m_user.unitFile(name);
}

Result<std::uint64_t> WorkHostUnits::cpuUsageNSec(const std::string& name) {
    if (isSlice(name) || isInstance(name)) {
        return usermanager::kNoUsage; // the kernel's cpu.stat, which the caller reads then
    }
    return m_user.cpuUsageNSec(name);
}

Result<std::uint32_t> WorkHostUnits::mainPid(const std::string& name) {
    if (isInstance(name)) {
        (void)receive();
        auto it = m_instances.find(name);
        return it == m_instances.end() ? 0U : it->second.pid;
    }
    return m_user.mainPid(name);
}

} // namespace nicer::workhost
