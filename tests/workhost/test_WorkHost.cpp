// The work host on a real cgroup v2 tree: a cgroup2 mount of its own in a private mount namespace of this
// test process (root only), so that neither the mount nor the host's leaves are seen by the machine's own
// mounts. The host runs in a forked child, as nicer-work-host runs it, on one end of a SOCK_SEQPACKET pair.
#include "Poll.h"
#include "Skip.h"
#include "TempDir.h"
#include "kernel/CgroupLayout.h"
#include "util/TextFile.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHost.h"
#include "workhost/WorkHostMessage.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sstream>
#include <string>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace nicer::workhost;
using nicer::Result;
using nicer::UniqueFd;
using nicer::kernel::CgroupLayout;
using nicer::test::pollUntil;
using nicer::test::TempDir;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// A bound for a broken build, not a figure the tests measure: it covers the host's grace (kShutdownGrace).
constexpr auto kWait = 30s;
constexpr auto kStep = 20ms;

/// Why this process cannot have mounts of its own, or nothing: it enters a private mount namespace once, and
/// every test's cgroup2 mount stays in it.
std::optional<std::string> privateMountsUnavailable() {
    static const std::optional<std::string> why = []() -> std::optional<std::string> {
        if (::geteuid() != 0) {
            return "mounting a cgroup2 tree of the test's own needs root";
        }
        if (::unshare(CLONE_NEWNS) != 0) {
            return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            return std::string("cannot make the mounts private: ") + std::strerror(errno);
        }
        return std::nullopt;
    }();
    return why;
}

bool ended(pid_t pid) {
    if (::kill(pid, 0) != 0) {
        return errno == ESRCH;
    }
    // A zombie no one reaped yet (an orphan of an ended host goes to this machine's init) runs no more. The
    // file is read with read(2): a process that ends meanwhile makes it fail with ESRCH, which an ifstream
    // turns into an exception (libstdc++'s filebuf throws on a read error), and which means it ended.
    const auto stat = nicer::readTextFile("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) {
        return true;
    }
    const std::string& text = *stat;
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

/// The processes of @p cgroup; none when it is gone (read as ended() reads, without an ifstream's throw).
std::vector<pid_t> pidsIn(const fs::path& cgroup) {
    std::vector<pid_t> pids;
    const auto text = nicer::readTextFile(cgroup / "cgroup.procs");
    std::istringstream in(text ? *text : std::string());
    for (pid_t pid = 0; in >> pid;) {
        pids.push_back(pid);
    }
    return pids;
}

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

/// A cgroup2 tree mounted in a temp dir, and a cgroup in it for the host's unit (the tree is the machine's
/// one v2 hierarchy, so the name is this process's own); all removed again.
class CgroupTree {
public:
    CgroupTree() {
        if (auto why = privateMountsUnavailable()) {
            m_skipReason = *why;
            return;
        }
        std::string mountPoint = (fs::temp_directory_path() / "nicer-cgroup2-XXXXXX").string();
        if (::mkdtemp(mountPoint.data()) == nullptr) {
            m_skipReason = std::string("cannot create a temp dir to mount on: ") + std::strerror(errno);
            return;
        }
        m_mountPoint = mountPoint;
        if (::mount("none", m_mountPoint.c_str(), "cgroup2", 0, nullptr) != 0) {
            m_skipReason = std::string("cannot mount a cgroup2 tree: ") + std::strerror(errno);
            return;
        }
        m_mounted = true;
        static int counter = 0;
        const std::string name =
            "nicer-workhost-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
        if (::mkdir((m_mountPoint / name).c_str(), 0755) != 0) {
            m_skipReason = "cannot create a cgroup in the cgroup2 tree: " + std::string(std::strerror(errno));
            return;
        }
        m_unitName = name;
        auto layout = CgroupLayout::parse("41 31 0:38 / " + m_mountPoint.string() +
                                          " rw,relatime - cgroup2 cgroup2 rw\n");
        if (!layout) {
            m_skipReason = "CgroupLayout does not take the test's mount: " + layout.error().message;
            return;
        }
        m_layout = std::move(*layout);
    }
    ~CgroupTree() {
        if (!m_unitName.empty()) {
            // Whatever a failed test left running in the unit's cgroup.
            (void)writeCgroupFile(unitDir() / "cgroup.kill", "1");
            removeCgroup(unitDir(), 5s);
        }
        // Never remove_all() here: on a mount still there it would remove the machine's empty cgroups.
        if (m_mounted && ::umount2(m_mountPoint.c_str(), MNT_DETACH) == 0) {
            m_mounted = false;
        }
        if (!m_mountPoint.empty() && !m_mounted) {
            ::rmdir(m_mountPoint.c_str());
        }
    }
    CgroupTree(const CgroupTree&) = delete;
    CgroupTree& operator=(const CgroupTree&) = delete;

    /// Why the tests cannot run here; empty when they can.
    const std::string& skipReason() const { return m_skipReason; }
    const CgroupLayout& layout() const { return *m_layout; }
    /// The unit's cgroup as systemd names it, from the root.
    std::string unitCgroup() const { return "/" + m_unitName; }
    fs::path unitDir() const { return m_mountPoint / m_unitName; }
    fs::path workDir() const { return unitDir() / "work"; }

private:
    fs::path m_mountPoint;
    bool m_mounted = false;
    std::string m_unitName;
    std::optional<CgroupLayout> m_layout;
    std::string m_skipReason;
};

std::string describe(const Message& message) {
    std::string text(verbKeyword(message.verb));
    for (const auto& field : message.fields) {
        text += " | " + field;
    }
    return text;
}

/// The next message within @p wait; nullopt when the peer closed the link.
Result<std::optional<Message>> receiveWithin(int fd, std::chrono::milliseconds wait) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (ready <= 0) {
        return nicer::Error{ready == 0 ? "nothing within the wait"
                                       : std::string("poll: ") + std::strerror(errno)};
    }
    return receiveMessage(fd);
}

/// The host's process, as nicer-work-host runs it: in the unit's cgroup, signals on a signalfd, nicerd on a
/// SOCK_SEQPACKET pair and a listening socket for the connections of any other nicerd.
class HostProcess {
public:
    explicit HostProcess(const CgroupTree& tree) {
        int pair[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
        UniqueFd listener(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        REQUIRE(listener);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        REQUIRE(m_socket.native().size() < sizeof address.sun_path);
        std::strcpy(address.sun_path, m_socket.c_str());
        REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        REQUIRE(::listen(listener.get(), 4) == 0);

        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            ::close(pair[0]);
            ::_exit(runHost(tree, pair[1], listener.get()));
        }
        ::close(pair[1]);
        m_link = UniqueFd(pair[0]);
        auto greeting = receiveWithin(m_link.get(), kWait);
        INFO((greeting ? std::string() : greeting.error().message));
        REQUIRE(greeting);
        REQUIRE(*greeting);
        INFO("the host's greeting: " << describe(**greeting));
        REQUIRE(**greeting == Message{Verb::Hello, {tree.unitCgroup() + "/work"}});
    }
    ~HostProcess() {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    HostProcess(const HostProcess&) = delete;
    HostProcess& operator=(const HostProcess&) = delete;

    pid_t pid() const { return m_pid; }
    int link() const { return m_link.get(); }
    const fs::path& socket() const { return m_socket; }

    void send(const Message& message) const { REQUIRE(sendMessage(m_link.get(), message)); }
    /// The host's next message.
    Message next() const {
        auto message = receiveWithin(m_link.get(), kWait);
        INFO((message ? std::string() : message.error().message));
        REQUIRE(message);
        REQUIRE(*message);
        return **message;
    }
    /// Sends start of @p argv (argv[0] a full path) and returns the host's answer.
    Message start(const std::string& name, const std::vector<std::string>& argv,
                  const std::string& workingDirectory = "/") const {
        StartRequest request;
        request.name = name;
        request.executable = argv.front();
        request.workingDirectory = workingDirectory;
        request.argv = argv;
        request.environment = {"PATH=/usr/bin:/bin", "LANG=C"};
        send(startMessage(request));
        return next();
    }
    /// Starts @p name and returns its main pid, from the "started" answer.
    pid_t started(const std::string& name, const std::vector<std::string>& argv) const {
        const Message answer = start(name, argv);
        INFO("the host's answer: " << describe(answer));
        REQUIRE(answer.verb == Verb::Started);
        REQUIRE(answer.fields.size() == 2);
        REQUIRE(answer.fields[0] == name);
        return static_cast<pid_t>(std::stol(answer.fields[1]));
    }

    void closeLink() { m_link.reset(); }
    /// The host's exit status once it ended within @p wait; nullopt while it runs.
    std::optional<int> waitForExit(std::chrono::milliseconds wait) {
        int status = 0;
        const bool gone = pollUntil([&] { return ::waitpid(m_pid, &status, WNOHANG) == m_pid; }, wait, kStep);
        if (!gone) {
            return std::nullopt;
        }
        m_pid = -1;
        return status;
    }

private:
    /// The child: never returns into the test runner.
    static int runHost(const CgroupTree& tree, int link, int listener) {
        if (!writeCgroupFile(tree.unitDir() / "cgroup.procs", "0")) {
            (void)sendMessage(link, {Verb::Refused, {"cannot enter the unit's cgroup"}});
            return 3;
        }
        const UniqueFd signalFd = WorkHost::blockSignals();
        auto host = WorkHost::prepare(tree.layout(), tree.unitCgroup(), /*needsCpu=*/false);
        if (!host) {
            (void)sendMessage(link, {Verb::Refused, {host.error().message}});
            return 3;
        }
        if (!sendMessage(link, {Verb::Hello, {host->workCgroup()}})) {
            return 4;
        }
        return host->serve(link, listener, signalFd.get()) ? 0 : 2;
    }

    TempDir m_dir{"nicer-workhost"};
    fs::path m_socket = m_dir.path / "work.socket";
    pid_t m_pid = -1;
    UniqueFd m_link;
};

/// A program that ignores SIGTERM (set before it writes its pid to @p pidFile, so the test waits for that).
std::string ignoringSigterm(const fs::path& pidFile) {
    return "trap \"\" TERM; echo $$ > " + pidFile.string() + "; exec sleep 1000";
}

/// A program whose main process ends on SIGTERM, and which leaves a daemonized grandchild (orphaned, so the
/// host, its subreaper, is its parent) that ignores SIGTERM; the grandchild's pid goes to @p pidFile.
std::vector<std::string> withStubbornGrandchild(const fs::path& pidFile) {
    return {"/bin/sh", "-c", "( /bin/sh -c '" + ignoringSigterm(pidFile) + "' & ); exec sleep 1000"};
}

pid_t readPidFile(const fs::path& file) {
    pid_t pid = 0;
    REQUIRE(pollUntil(
        [&] {
            auto text = nicer::readTextFile(file);
            return text && !text->empty() && text->back() == '\n' && (pid = std::stoi(*text)) > 0;
        },
        kWait, kStep));
    return pid;
}

/// A field of /proc/PID/status ("PPid", "SigIgn"), empty when the process is gone.
std::string statusField(pid_t pid, const std::string& field) {
    const auto text = nicer::readTextFile("/proc/" + std::to_string(pid) + "/status");
    std::istringstream in(text ? *text : std::string());
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(field + ":", 0) == 0) {
            return line.substr(line.find_first_not_of(" \t", field.size() + 1));
        }
    }
    return {};
}

bool ignoresSigterm(pid_t pid) {
    const std::string mask = statusField(pid, "SigIgn");
    return !mask.empty() && ((std::stoull(mask, nullptr, 16) >> (SIGTERM - 1)) & 1U) != 0;
}

} // namespace

TEST_CASE("the work host starts an instance in a leaf of its own and answers with its pid", "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    HostProcess host(tree);
    CHECK(fs::is_directory(tree.unitDir() / "host"));
    CHECK(contains(pidsIn(tree.unitDir() / "host"), host.pid()));

    const pid_t pid = host.started("nicer-work-1.service", {"/bin/sleep", "1000"});
    CHECK(pidsIn(tree.workDir() / "nicer-work-1.service") == std::vector<pid_t>{pid});
    errno = 0;
    CHECK(::getpriority(PRIO_PROCESS, static_cast<id_t>(pid)) == 19);
    CHECK(errno == 0);

    SECTION("a second instance of the same name is refused while the first runs") {
        const Message again = host.start("nicer-work-1.service", {"/bin/sleep", "1000"});
        CHECK(again.verb == Verb::Failed);
        CHECK_THAT(again.fields.at(1), Catch::Contains("running already"));
        CHECK_FALSE(ended(pid));
    }
    SECTION("stop ends it and answers exited with how; its leaf is gone") {
        host.send({Verb::Stop, {"nicer-work-1.service"}});
        CHECK(host.next() == Message{Verb::Exited, {"nicer-work-1.service", "killed by SIGTERM"}});
        CHECK(pollUntil([&] { return ended(pid); }, kWait, kStep));
        CHECK_FALSE(fs::exists(tree.workDir() / "nicer-work-1.service"));
    }
}

TEST_CASE("a start the host cannot carry out answers failed, saying which step failed", "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    HostProcess host(tree);

    SECTION("a working directory that does not exist") {
        const Message answer = host.start("nicer-work-1.service", {"/bin/sleep", "1000"}, "/nonexistent/dir");
        REQUIRE(answer.fields.size() == 2);
        CHECK(answer.verb == Verb::Failed);
        CHECK(answer.fields[0] == "nicer-work-1.service");
        CHECK_THAT(answer.fields[1], Catch::Contains("working directory") && Catch::Contains("No such file"));
    }
    SECTION("a program that does not exist") {
        const Message answer = host.start("nicer-work-1.service", {"/nonexistent/program"});
        REQUIRE(answer.fields.size() == 2);
        CHECK(answer.verb == Verb::Failed);
        CHECK_THAT(answer.fields[1],
                   Catch::Contains("/nonexistent/program") && Catch::Contains("No such file"));
    }
    SECTION("a start request that is not whole") {
        host.send({Verb::Start, {"nicer-work-1.service", "19"}});
        const Message answer = host.next();
        REQUIRE(answer.fields.size() == 2);
        CHECK(answer.verb == Verb::Failed);
        CHECK(answer.fields[0] == "nicer-work-1.service");
        CHECK_THAT(answer.fields[1], Catch::Contains("at least 6"));
    }
    // No leaf is left behind, and the host serves on.
    CHECK_FALSE(fs::exists(tree.workDir() / "nicer-work-1.service"));
    host.send({Verb::Stop, {"nicer-work-9.service"}});
    CHECK(host.next() == Message{Verb::Exited, {"nicer-work-9.service", "not running"}});
}

TEST_CASE("a second connection is refused while the link is served, and the host serves on", "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    HostProcess host(tree);
    const pid_t pid = host.started("nicer-work-1.service", {"/bin/sleep", "1000"});

    UniqueFd other(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    REQUIRE(other);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, host.socket().c_str());
    REQUIRE(::connect(other.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    auto refused = receiveWithin(other.get(), kWait);
    REQUIRE(refused);
    REQUIRE(*refused);
    CHECK((*refused)->verb == Verb::Refused);
    REQUIRE((*refused)->has(1));
    CHECK_THAT((*refused)->fields.front(), Catch::Contains("another nicerd"));
    auto closed = receiveWithin(other.get(), kWait);
    REQUIRE(closed);
    CHECK_FALSE(closed->has_value());

    // The link is served as before: the instance runs, and stops when asked.
    CHECK_FALSE(ended(pid));
    host.send({Verb::Stop, {"nicer-work-1.service"}});
    CHECK(host.next() == Message{Verb::Exited, {"nicer-work-1.service", "killed by SIGTERM"}});
    CHECK(host.started("nicer-work-2.service", {"/bin/sleep", "1000"}) > 0);
}

TEST_CASE("stop kills an instance's leaf as one: a daemonized grandchild that ignores SIGTERM too",
          "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    HostProcess host(tree);
    TempDir dir;
    const pid_t pid = host.started("nicer-work-1.service", withStubbornGrandchild(dir.path / "grandchild"));
    const pid_t grandchild = readPidFile(dir.path / "grandchild");
    CHECK(contains(pidsIn(tree.workDir() / "nicer-work-1.service"), grandchild));
    CHECK(statusField(grandchild, "PPid") == std::to_string(host.pid()));
    CHECK(ignoresSigterm(grandchild));

    host.send({Verb::Stop, {"nicer-work-1.service"}});
    CHECK(host.next() == Message{Verb::Exited, {"nicer-work-1.service", "killed by SIGTERM"}});
    CHECK(pollUntil([&] { return ended(pid) && ended(grandchild); }, kWait, kStep));
    CHECK_FALSE(fs::exists(tree.workDir() / "nicer-work-1.service"));
}

TEST_CASE("when the link closes the host stops every instance and ends", "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    HostProcess host(tree);
    TempDir dir;
    const pid_t first = host.started("nicer-work-1.service", {"/bin/sleep", "1000"});
    const pid_t second =
        host.started("nicer-work-2.service", withStubbornGrandchild(dir.path / "grandchild"));
    const pid_t grandchild = readPidFile(dir.path / "grandchild");
    // One that ignores SIGTERM itself: killed when the host's grace is over.
    const pid_t stubborn =
        host.started("nicer-work-3.service", {"/bin/sh", "-c", ignoringSigterm(dir.path / "stubborn")});
    REQUIRE(readPidFile(dir.path / "stubborn") == stubborn);
    CHECK(ignoresSigterm(grandchild));
    CHECK(ignoresSigterm(stubborn));

    host.closeLink();
    const auto status = host.waitForExit(kWait);
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    for (pid_t pid : {first, second, grandchild, stubborn}) {
        INFO("pid " << pid);
        CHECK(pollUntil([&] { return ended(pid); }, kWait, kStep));
    }
    CHECK_FALSE(fs::exists(tree.workDir()));
}

TEST_CASE("waitUntilEmpty waits out a busy cgroup and wakes when its last process ends", "[WorkHost]") {
    CgroupTree tree;
    if (!tree.skipReason().empty()) {
        NICER_SKIP(tree.skipReason());
    }
    const fs::path leaf = tree.unitDir() / "waited";
    REQUIRE(fs::create_directories(leaf));
    // A process in the leaf that ends when told to (its pipe closes), and one that never ends by itself.
    int pipeFds[2];
    REQUIRE(::pipe2(pipeFds, O_CLOEXEC) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipeFds[1]);
        std::ofstream(leaf / "cgroup.procs") << ::getpid() << '\n';
        char byte = 0;
        (void)::read(pipeFds[0], &byte, 1);
        ::_exit(0);
    }
    ::close(pipeFds[0]);
    REQUIRE(pollUntil([&] { return contains(pidsIn(leaf), pid); }, kWait, kStep));

    // Not empty within a short wait: false, and the process is still there.
    CHECK_FALSE(waitUntilEmpty(leaf, 200ms));
    CHECK(contains(pidsIn(leaf), pid));

    // The process ends while the wait runs: the wait ends, with the leaf empty.
    ::close(pipeFds[1]);
    CHECK(waitUntilEmpty(leaf, kWait));
    CHECK(pidsIn(leaf).empty());
    ::waitpid(pid, nullptr, 0);
    removeCgroup(leaf, 0ms);
    CHECK_FALSE(fs::exists(leaf));
}
