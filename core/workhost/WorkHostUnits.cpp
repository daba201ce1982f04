#include "workhost/WorkHostUnits.h"

#include "util/Text.h"
#include "workhost/WorkHost.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace nicer::workhost {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using usermanager::ExecCommand;
using usermanager::Properties;
using usermanager::Property;
using usermanager::UnitState;

namespace {

Result<UniqueFd> connectTo(const fs::path& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.native().size() >= sizeof address.sun_path) {
        return Error{"the work host's socket path " + path.string() + " is too long"};
    }
    std::strcpy(address.sun_path, path.c_str());
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        return Error{"cannot connect to " + path.string() + ": " + std::strerror(errno)};
    }
    // Only root (systemd, which made the socket) or this user can listen there; anyone else is refused.
    ucred peer{};
    socklen_t length = sizeof peer;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
        (peer.uid != 0 && peer.uid != ::getuid())) {
        return Error{"the socket " + path.string() + " is held by uid " + std::to_string(peer.uid) +
                     ", neither systemd nor you; refused"};
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

Result<std::unique_ptr<WorkHostUnits>> WorkHostUnits::connect(usermanager::UnitManager& user, Names names,
                                                              std::chrono::milliseconds wait, fs::path socket,
                                                              fs::path cgroupRoot) {
    std::error_code ec;
    if (!fs::exists(socket, ec)) {
        return Error{socket.string() +
                     " is not there: nicer's system part is not installed (nicer's .deb "
                     "installs it), or not yet set up for you (after the first install, log "
                     "out and in once, or run: sudo systemctl start nicer-work@" +
                     std::to_string(::getuid()) + ".socket)"};
    }
    auto units = std::unique_ptr<WorkHostUnits>(
        new WorkHostUnits(user, std::move(names), wait, std::move(socket), std::move(cgroupRoot)));
    if (auto hosted = units->ensureHost(); !hosted) {
        return hosted.error();
    }
    return units;
}

WorkHostUnits::WorkHostUnits(usermanager::UnitManager& user, Names names, std::chrono::milliseconds wait,
                             fs::path socket, fs::path cgroupRoot)
    : m_user(user)
    , m_names(std::move(names))
    , m_unit(workUnitFor(::getuid()))
    , m_wait(wait)
    , m_socket(std::move(socket))
    , m_cgroupRoot(std::move(cgroupRoot)) {}

WorkHostUnits::~WorkHostUnits() {
    // Closing the link is the host's signal to stop the work and end; the unit then goes inactive by itself.
    m_link.reset();
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
    auto link = connectTo(m_socket);
    if (!link) {
        return Error{"cannot reach the work host of " + m_unit + ": " + link.error().message};
    }
    // The host answers once systemd started it and it laid out its cgroups (or a host still stopping ended).
    if (!readable(link->get(), m_wait)) {
        return Error{m_unit + "'s host said nothing within " + std::to_string(m_wait.count()) +
                     " ms: see journalctl -u " + m_unit};
    }
    auto received = receiveMessage(link->get());
    if (!received) {
        return received.error();
    }
    if (!*received) {
        return Error{m_unit + "'s host closed the link before it greeted: see journalctl -u " + m_unit};
    }
    const Message& hello = **received;
    if (hello.verb == Verb::Refused && hello.has(1)) {
        return Error{m_unit + " cannot run the work: " + hello.fields.front()};
    }
    if (hello.verb != Verb::Hello || !hello.has(1) || !hello.fields.front().starts_with('/')) {
        return Error{m_unit + "'s host did not greet as expected"};
    }
    m_link = std::move(*link);
    m_workCgroup = hello.fields.front();
    for (const auto& [file, value] : m_leafFiles) {
        if (auto written = writeLeafFile(file, value); !written) {
            m_link.reset(); // the host stops what it runs: nothing runs without its cap
            return Error{"the work host's leaf did not take what nicerd set before: " +
                         written.error().message};
        }
    }
    return {};
}

void WorkHostUnits::hostGone() {
    m_link.reset();
    for (auto& [name, instance] : m_instances) {
        if (instance.state == UnitState::Active) {
            instance.state = UnitState::Failed;
        }
        instance.pid = 0;
    }
}

void WorkHostUnits::handle(const Message& message) {
    if (message.fields.size() < 2) {
        return;
    }
    const auto& name = message.fields[0];
    const auto& detail = message.fields[1];
    if (message.verb == Verb::Started || message.verb == Verb::Failed) {
        m_answers[name] = message;
        std::uint32_t pid = 0;
        if (message.verb == Verb::Started && text::parseNumber(detail, pid)) {
            m_instances[name] = Instance{UnitState::Active, pid};
        }
    } else if (message.verb == Verb::Exited) {
        auto& instance = m_instances[name];
        instance.state = detail.starts_with("exited with status 0") ? UnitState::Inactive : UnitState::Failed;
        instance.pid = 0;
    }
}

Result<void> WorkHostUnits::receive(std::optional<std::chrono::milliseconds> wait) {
    while (m_link && readable(m_link.get(), wait.value_or(std::chrono::milliseconds(0)))) {
        auto message = receiveMessage(m_link.get());
        if (!message || !*message) {
            hostGone();
            return message ? Error{m_unit + "'s host ended"} : Result<void>(message.error());
        }
        handle(**message);
        wait.reset(); // one waited for; the rest only as far as they are there
    }
    return {};
}

Result<void> WorkHostUnits::writeLeafFile(const std::string& file, const std::string& value) {
    m_leafFiles[file] = value;
    if (!m_link) {
        return {}; // written when the host is back
    }
    return writeCgroupFile(m_cgroupRoot / m_workCgroup.substr(1) / file, value);
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
        if (*number == 0) {
            return writeLeafFile("cpu.idle", "1");
        }
        if (auto notIdle = writeLeafFile("cpu.idle", "0"); !notIdle) {
            return notIdle;
        }
        return writeLeafFile("cpu.weight", std::to_string(*number));
    }
    if ((p.name == "MemoryHigh" || p.name == "MemoryMax") && number) {
        return writeLeafFile(p.name == "MemoryHigh" ? "memory.high" : "memory.max", limit(*number));
    }
    if (p.name == "MemorySwapMax" && number) {
        // A kernel that accounts no swap (swapaccount=0) has no memory.swap.max, as systemd skips it there.
        std::error_code error;
        if (m_link &&
            !std::filesystem::exists(m_cgroupRoot / m_workCgroup.substr(1) / "memory.swap.max", error)) {
            return {};
        }
        return writeLeafFile("memory.swap.max", limit(*number));
    }
    if (p.name == "Description" || p.name == "CPUAccounting") {
        return {}; // the kernel accounts every v2 cgroup's CPU time
    }
    if (p.name == "ManagedOOMSwap") {
        return {}; // the .deb's nicer.slice has it, for every user's work
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
    // What the host said since comes first: a link it closed is seen here, and ensureHost connects again.
    (void)receive();
    if (auto hosted = ensureHost(); !hosted) {
        return hosted;
    }
    m_answers.erase(name);
    // Refused here, not by sendMessage: a message too long is the request's fault, and the link stays up.
    const Message start = startMessage(request);
    if (const auto bytes = encodeMessage(start).size(); bytes > kMaxMessageBytes) {
        return Error{name + ": its command line and environment take " + std::to_string(bytes) +
                     " bytes, over the work host's limit of " + std::to_string(kMaxMessageBytes) +
                     "; shorten them"};
    }
    if (auto sent = sendMessage(m_link.get(), start); !sent) {
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
    const auto answer = m_answers.extract(name);
    if (answer.empty() || answer.mapped().verb != Verb::Started) {
        m_instances[name] = Instance{UnitState::Failed, 0};
        return Error{"cannot start " + name + " in " + m_unit + ": " +
                     (answer.empty() ? "no answer from the host" : answer.mapped().fields[1])};
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

void WorkHostUnits::setUnitPropertiesAsync(const std::string& name, const Properties& props) {
    if (!isSlice(name)) {
        m_user.setUnitPropertiesAsync(name, props);
        return;
    }
    const auto written = setUnitProperties(name, props);
    for (const auto& property : props) {
        m_sliceWrites[property.name] = written;
    }
}

usermanager::PropertyWrites WorkHostUnits::takePropertyWrites(const std::string& name,
                                                              const std::string& property) {
    if (!isSlice(name)) {
        return m_user.takePropertyWrites(name, property);
    }
    return {std::exchange(m_sliceWrites[property], Result<void>{}), false};
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
    if (it == m_instances.end() || it->second.state != UnitState::Active || !m_link) {
        return {};
    }
    if (auto sent = sendMessage(m_link.get(), {Verb::Stop, {name}}); !sent) {
        hostGone();
        return {};
    }
    const auto until = Clock::now() + std::chrono::seconds(15);
    while (wait && m_link && m_instances[name].state == UnitState::Active && Clock::now() < until) {
        (void)receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
    }
    if (wait && m_link && m_instances[name].state == UnitState::Active) {
        return Error{"the work host did not stop " + name + " within 15 s"};
    }
    return {};
}

Result<void> WorkHostUnits::freezeUnit(const std::string& name) {
    if (isSlice(name)) {
        return Error{
            "the root idle slice has no unit to freeze; its leaf's cgroup.freeze is written instead"};
    }
    if (isInstance(name)) {
        return writeInstanceFreeze(name, "1");
    }
    return m_user.freezeUnit(name);
}

Result<void> WorkHostUnits::thawUnit(const std::string& name) {
    if (isSlice(name)) {
        return writeLeafFile("cgroup.freeze", "0");
    }
    if (isInstance(name)) {
        return writeInstanceFreeze(name, "0");
    }
    return m_user.thawUnit(name);
}

Result<void> WorkHostUnits::writeInstanceFreeze(const std::string& name, const char* value) {
    // An instance's own leaf, under the work's, which this user owns as it owns the work's.
    const auto it = m_instances.find(name);
    if (!m_link || it == m_instances.end() || it->second.state != UnitState::Active) {
        return Error{name + " does not run in the root idle slice now"};
    }
    return writeCgroupFile(m_cgroupRoot / m_workCgroup.substr(1) / name / "cgroup.freeze", value);
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

Result<UnitState> WorkHostUnits::activeState(const std::string& name) {
    if (isSlice(name)) {
        (void)receive();
        return m_link ? UnitState::Active : UnitState::Inactive;
    }
    if (isInstance(name)) {
        (void)receive();
        auto it = m_instances.find(name);
        return it == m_instances.end() ? UnitState::Inactive : it->second.state;
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
