// nicerd's side of the root idle slice against a fake work host: a thread that listens on a SOCK_SEQPACKET
// socket in a temp dir and speaks the link's protocol, with plain files standing in for the work's leaf.
#include "Poll.h"
#include "ScopedEnv.h"
#include "TempDir.h"
#include "fakes/FakeUnitManager.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHostMessage.h"
#include "workhost/WorkHostUnits.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace nicer::workhost;
using nicer::UniqueFd;
using nicer::test::FakeUnitManager;
using nicer::test::pollUntil;
using nicer::test::ScopedEnv;
using nicer::test::TempDir;
using nicer::usermanager::ExecCommand;
using nicer::usermanager::Properties;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const WorkHostUnits::Names kNames{"nicer.slice", "nicer-work"};
constexpr auto kUnitsWait = 10s; // a bound for a broken build: every answer of the fake host comes at once
constexpr auto kUnitsStep = 10ms;

/// How the fake host meets a connection.
struct Greeting {
    enum class Kind {
        Hello,   ///< "hello TEXT", then serves the link
        Refused, ///< "refused TEXT", then closes it
        Close,   ///< closes it unanswered
        Silent,  ///< keeps it open and says nothing
    };
    Kind kind = Kind::Close;
    std::string text;
};

Greeting hello(const std::string& workCgroup) {
    return {Greeting::Kind::Hello, workCgroup};
}

/// The answers of a host that runs whatever it is asked to: "started NAME 4242", and a clean exit on stop.
std::vector<Message> runsEverything(const Message& m) {
    if (m.verb == Verb::Start && !m.fields.empty()) {
        return {{Verb::Started, {m.fields[0], "4242"}}};
    }
    if (m.verb == Verb::Stop && m.has(1)) {
        return {{Verb::Exited, {m.fields[0], "exited with status 0"}}};
    }
    return {};
}

/**
 * A work host in a thread: meets connections with @p greetings in turn (those past the list are closed
 * unanswered), serves one link at a time with @p answer and records what it receives.
 */
class FakeWorkHost {
public:
    using Answer = std::function<std::vector<Message>(const Message&)>;

    FakeWorkHost(const fs::path& socket, std::vector<Greeting> greetings, Answer answer = runsEverything)
        : m_greetings(std::move(greetings))
        , m_answer(std::move(answer)) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        REQUIRE(socket.native().size() < sizeof address.sun_path);
        std::strcpy(address.sun_path, socket.c_str());
        m_listener = UniqueFd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        REQUIRE(m_listener);
        REQUIRE(::bind(m_listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        REQUIRE(::listen(m_listener.get(), 4) == 0);
        REQUIRE(::pipe2(m_wake, O_CLOEXEC) == 0);
        m_thread = std::thread([this] { run(); });
    }
    ~FakeWorkHost() {
        command('q');
        m_thread.join();
        ::close(m_wake[0]);
        ::close(m_wake[1]);
    }
    FakeWorkHost(const FakeWorkHost&) = delete;
    FakeWorkHost& operator=(const FakeWorkHost&) = delete;

    /// Closes the link being served, as a host that ends does; returns once it is closed.
    void closeLink() {
        const int before = closedByHost();
        command('c');
        REQUIRE(pollUntil([&] { return closedByHost() > before; }, kUnitsWait, kUnitsStep));
    }

    std::vector<Message> received() const {
        std::lock_guard lock(m_mutex);
        return m_received;
    }
    /// The start messages received, in order.
    std::vector<Message> starts() const {
        auto all = received();
        std::vector<Message> out;
        std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                     [](const Message& m) { return m.verb == Verb::Start; });
        return out;
    }
    int connections() const {
        std::lock_guard lock(m_mutex);
        return m_connections;
    }
    /// How many served links nicerd's side closed.
    int closedByPeer() const {
        std::lock_guard lock(m_mutex);
        return m_closedByPeer;
    }

private:
    int closedByHost() const {
        std::lock_guard lock(m_mutex);
        return m_closedByHost;
    }
    void command(char c) { REQUIRE(::write(m_wake[1], &c, 1) == 1); }

    void run() {
        std::size_t next = 0;
        UniqueFd link;
        std::vector<UniqueFd> silent;
        while (true) {
            pollfd fds[3] = {{m_wake[0], POLLIN, 0}, {link.get(), POLLIN, 0}, {m_listener.get(), POLLIN, 0}};
            if (::poll(fds, 3, -1) < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return;
            }
            if (fds[0].revents & POLLIN) {
                char c = 0;
                (void)!::read(m_wake[0], &c, 1);
                if (c == 'q') {
                    return;
                }
                link.reset();
                std::lock_guard lock(m_mutex);
                ++m_closedByHost;
                continue; // the link polled is gone
            }
            // The link before the listener: nicerd's side closes a link before it connects again.
            if (fds[1].revents != 0) {
                auto message = receiveMessage(link.get());
                if (!message || !*message) {
                    link.reset();
                    std::lock_guard lock(m_mutex);
                    ++m_closedByPeer;
                } else {
                    {
                        std::lock_guard lock(m_mutex);
                        m_received.push_back(**message);
                    }
                    for (const auto& answer : m_answer(**message)) {
                        (void)sendMessage(link.get(), answer);
                    }
                }
            }
            if (fds[2].revents & POLLIN) {
                UniqueFd accepted(::accept4(m_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
                if (!accepted) {
                    continue;
                }
                const Greeting greeting = next < m_greetings.size() ? m_greetings[next] : Greeting{};
                ++next;
                {
                    std::lock_guard lock(m_mutex);
                    ++m_connections;
                }
                switch (greeting.kind) {
                case Greeting::Kind::Hello:
                    (void)sendMessage(accepted.get(), {Verb::Hello, {greeting.text}});
                    link = std::move(accepted);
                    break;
                case Greeting::Kind::Refused:
                    (void)sendMessage(accepted.get(), {Verb::Refused, {greeting.text}});
                    break;
                case Greeting::Kind::Close:
                    break;
                case Greeting::Kind::Silent:
                    silent.push_back(std::move(accepted));
                    break;
                }
            }
        }
    }

    UniqueFd m_listener;
    int m_wake[2] = {-1, -1};
    const std::vector<Greeting> m_greetings;
    const Answer m_answer;
    mutable std::mutex m_mutex;
    std::vector<Message> m_received;
    int m_connections = 0;
    int m_closedByPeer = 0;
    int m_closedByHost = 0;
    std::thread m_thread;
};

/// A temp dir with the host's socket path and a cgroup root whose work leaf ("/unit/work") holds the files
/// nicerd writes, as plain files.
struct Place {
    TempDir dir{"nicer-workhost"};
    fs::path socket = dir.path / "work.socket";
    fs::path cgroupRoot = dir.path / "cgroup";
    fs::path leaf = cgroupRoot / "unit" / "work";

    Place() {
        fs::create_directories(leaf);
        for (const char* file :
             {"cpu.max", "cpu.idle", "cpu.weight", "memory.high", "memory.max", "cgroup.freeze"}) {
            std::ofstream(leaf / file).flush();
        }
    }
    std::string read(const std::string& file) const {
        std::ifstream in(leaf / file);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }
    /// Empties every leaf file, so that the next read shows only what was written since.
    void clear() const {
        for (const auto& entry : fs::directory_iterator(leaf)) {
            fs::resize_file(entry.path(), 0);
        }
    }
};

std::unique_ptr<WorkHostUnits> connected(FakeUnitManager& user, const Place& place) {
    auto units = WorkHostUnits::connect(user, kNames, kUnitsWait, place.socket, place.cgroupRoot);
    INFO((units ? std::string() : units.error().message));
    REQUIRE(units);
    return std::move(*units);
}

std::string connectError(FakeUnitManager& user, const Place& place,
                         std::chrono::milliseconds wait = std::chrono::milliseconds(kUnitsWait)) {
    auto units = WorkHostUnits::connect(user, kNames, wait, place.socket, place.cgroupRoot);
    REQUIRE_FALSE(units);
    return units.error().message;
}

Properties instanceProps(std::vector<std::string> argv, std::int32_t nice = 19) {
    const std::string path = "/usr/bin/" + argv.front();
    return {{"Description", std::string("volunteer work")},
            {"ExecStart", std::vector<ExecCommand>{{path, std::move(argv), false}}},
            {"Nice", nice}};
}

bool stateIs(WorkHostUnits& units, const std::string& name, nicer::usermanager::UnitState state) {
    auto current = units.activeState(name);
    return current && *current == state;
}

} // namespace

TEST_CASE("connect fails naming the socket when the work host's socket is not there", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    const auto error = connectError(user, place);
    CHECK_THAT(error, Catch::Contains(place.socket.string()) && Catch::Contains("not installed"));
    CHECK(user.calls().empty());
}

TEST_CASE("a host that refuses the work is an error carrying its reason", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket,
                      {{Greeting::Kind::Refused, "the cpu controller is not available in /nicer.slice/x"}});
    const auto error = connectError(user, place);
    CHECK_THAT(error, Catch::Contains("cannot run the work") &&
                          Catch::Contains("the cpu controller is not available in /nicer.slice/x"));
}

TEST_CASE("a host that closes the link before it greets is an error", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {{Greeting::Kind::Close, ""}});
    CHECK_THAT(connectError(user, place), Catch::Contains("closed the link before it greeted"));
}

TEST_CASE("a host that does not greet within the wait is an error", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {{Greeting::Kind::Silent, ""}});
    CHECK_THAT(connectError(user, place, 100ms), Catch::Contains("said nothing within 100 ms"));
}

TEST_CASE("the slice's properties are written to the files of the work's leaf", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work")});
    auto units = connected(user, place);
    CHECK(units->workCgroup() == "/unit/work");
    CHECK(units->controlGroup("nicer.slice").value() == "/unit/work");
    CHECK(units->controlGroup("nicer-work-1.service").value() == "/unit/work/nicer-work-1.service");
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Active));

    SECTION("the CPU quota as cpu.max's QUOTA PERIOD, per second of CPU scaled to the period") {
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPerSecUSec", std::uint64_t{500'000}}}));
        CHECK(place.read("cpu.max") == "50000 100000");
        place.clear();
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPeriodUSec", std::uint64_t{50'000}},
                                                         {"CPUQuotaPerSecUSec", std::uint64_t{250'000}}}));
        CHECK(place.read("cpu.max") == "12500 50000");
        place.clear();
        // The kernel takes no quota under 1 ms.
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPerSecUSec", std::uint64_t{1'000}}}));
        CHECK(place.read("cpu.max") == "1000 50000");
        place.clear();
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPerSecUSec", UINT64_MAX}}));
        CHECK(place.read("cpu.max") == "max 50000");
    }
    SECTION("the memory limits as memory.max and memory.high, infinity as max") {
        REQUIRE(units->setUnitProperties(
            "nicer.slice", {{"MemoryMax", std::uint64_t{1} << 30}, {"MemoryHigh", std::uint64_t{3} << 28}}));
        CHECK(place.read("memory.max") == "1073741824");
        CHECK(place.read("memory.high") == "805306368");
        place.clear();
        REQUIRE(units->setUnitProperties("nicer.slice", {{"MemoryHigh", UINT64_MAX}}));
        CHECK(place.read("memory.high") == "max");
    }
    SECTION("the swap limit as memory.swap.max where the kernel accounts swap, and ManagedOOMSwap to the "
            ".deb's slice") {
        std::ofstream(place.leaf / "memory.swap.max").flush();
        REQUIRE(units->setUnitProperties("nicer.slice", {{"MemorySwapMax", std::uint64_t{1} << 29},
                                                         {"ManagedOOMSwap", std::string("kill")}}));
        CHECK(place.read("memory.swap.max") == "536870912");
        // Without swap accounting (swapaccount=0) there is no memory.swap.max: nothing to write.
        fs::remove(place.leaf / "memory.swap.max");
        REQUIRE(units->setUnitProperties("nicer.slice", {{"MemorySwapMax", std::uint64_t{1} << 29}}));
        CHECK_FALSE(fs::exists(place.leaf / "memory.swap.max"));
    }
    SECTION("the CPU weight: idle as cpu.idle, a weight as cpu.weight") {
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUWeight", std::uint64_t{0}}}));
        CHECK(place.read("cpu.idle") == "1");
        REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUWeight", std::uint64_t{100}}}));
        CHECK(place.read("cpu.weight") == "100");
    }
    SECTION("what a cgroup has no file for is accepted or refused, never passed on") {
        CHECK(units->setUnitProperties("nicer.slice",
                                       {{"Description", std::string("the work")}, {"CPUAccounting", true}}));
        auto refused =
            units->setUnitProperties("nicer.slice", {{"AllowedCPUs", std::vector<std::uint32_t>{1}}});
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("AllowedCPUs"));
    }
    SECTION("thawing writes cgroup.freeze; freezing is the leaf's file, not a unit's") {
        REQUIRE(units->thawUnit("nicer.slice"));
        CHECK(place.read("cgroup.freeze") == "0");
        auto frozen = units->freezeUnit("nicer.slice");
        REQUIRE_FALSE(frozen);
        CHECK_THAT(frozen.error().message, Catch::Contains("cgroup.freeze"));
    }
    CHECK(user.calls().empty());
}

TEST_CASE("units that are not the work's go to the user manager", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work")});
    auto units = connected(user, place);
    user.unit("boinc-helper.service").activeState = nicer::usermanager::UnitState::Active;

    REQUIRE(units->startTransientUnit("other.service", {{"Description", std::string("other")}}, true));
    REQUIRE(units->setUnitProperties("app.slice", {{"CPUWeight", std::uint64_t{50}}}));
    REQUIRE(units->stopUnit("other.service", true));
    // The supervisor's prefix, but not an instance's name.
    REQUIRE(units->startTransientUnit("nicer-worker-1.service", instanceProps({"sleep", "1"}), false));
    CHECK(units->activeState("boinc-helper.service").value() == nicer::usermanager::UnitState::Active);
    CHECK(units->managerVersion().value() == user.version);

    REQUIRE(user.actions().size() == 4);
    CHECK(user.actions()[0].method == "startTransientUnit");
    CHECK(user.actions()[0].unit == "other.service");
    CHECK(user.actions()[1].method == "setUnitProperties");
    CHECK(user.actions()[1].unit == "app.slice");
    CHECK(user.actions()[2].method == "stopUnit");
    CHECK(user.actions()[3].unit == "nicer-worker-1.service");
    CHECK(host.starts().empty());

    // A process of the user manager cannot join the root idle slice: refused, not passed on.
    auto moved = units->startTransientUnit("run-1.scope", {{"PIDs", std::vector<std::uint32_t>{1234}}}, true);
    REQUIRE_FALSE(moved);
    CHECK_THAT(moved.error().message, Catch::Contains("cannot be moved"));
    CHECK(user.actions().size() == 4);
}

TEST_CASE("an instance's start sends the host its command, nice level, home and environment",
          "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    // Set before the host's thread runs: no thread reads the environment meanwhile.
    ScopedEnv home("HOME", "/home/volunteer");
    ScopedEnv marker("NICER_WORKHOST_TEST", "passed on");
    ScopedEnv notify("NOTIFY_SOCKET", "/run/systemd/notify"); // nicerd's own unit's, not the work's
    FakeWorkHost host(place.socket, {hello("/unit/work")});
    auto units = connected(user, place);

    REQUIRE(
        units->startTransientUnit("nicer-work-1.service", instanceProps({"md5sum", "/dev/zero"}, 15), true));
    REQUIRE(host.starts().size() == 1);
    auto request = parseStart(host.starts().front());
    INFO((request ? std::string() : request.error().message));
    REQUIRE(request);
    CHECK(request->name == "nicer-work-1.service");
    CHECK(request->nice == 15);
    CHECK(request->executable == "/usr/bin/md5sum");
    CHECK(request->argv == std::vector<std::string>{"md5sum", "/dev/zero"});
    CHECK(request->workingDirectory == "/home/volunteer");
    const auto& env = request->environment;
    CHECK(std::find(env.begin(), env.end(), "NICER_WORKHOST_TEST=passed on") != env.end());
    CHECK(std::none_of(env.begin(), env.end(),
                       [](const std::string& e) { return e.rfind("NOTIFY_SOCKET=", 0) == 0; }));

    CHECK(stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Active));
    CHECK(units->mainPid("nicer-work-1.service").value() == 4242U);

    REQUIRE(units->stopUnit("nicer-work-1.service", true));
    REQUIRE(host.received().size() == 2);
    CHECK(host.received()[1] == Message{Verb::Stop, {"nicer-work-1.service"}});
    CHECK(stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Inactive));
    CHECK(units->mainPid("nicer-work-1.service").value() == 0U);
    CHECK(user.calls().empty());
}

TEST_CASE("an instance the host cannot start is an error carrying the host's reason", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work")}, [](const Message& m) {
        return std::vector<Message>{
            {Verb::Failed, {m.fields[0], "cannot enter its working directory: No such file or directory"}}};
    });
    auto units = connected(user, place);
    auto started = units->startTransientUnit("nicer-work-1.service", instanceProps({"sleep", "100"}), true);
    REQUIRE_FALSE(started);
    CHECK_THAT(started.error().message,
               Catch::Contains("nicer-work-1.service") &&
                   Catch::Contains("cannot enter its working directory: No such file or directory"));
    CHECK(stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Failed));
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Active)); // the link stays
}

TEST_CASE("a start over the link's limit is refused before it is sent, and the link stays up",
          "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work")});
    auto units = connected(user, place);

    auto huge = units->startTransientUnit("nicer-work-1.service",
                                          instanceProps({"sh", std::string(kMaxMessageBytes, 'x')}), true);
    REQUIRE_FALSE(huge);
    CHECK_THAT(huge.error().message,
               Catch::Contains("nicer-work-1.service") && Catch::Contains(std::to_string(kMaxMessageBytes)));
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Active));

    REQUIRE(units->startTransientUnit("nicer-work-2.service", instanceProps({"sleep", "100"}), true));
    CHECK(stateIs(*units, "nicer-work-2.service", nicer::usermanager::UnitState::Active));
    REQUIRE(host.starts().size() == 1);
    CHECK(host.starts().front().fields[0] == "nicer-work-2.service");
    CHECK(host.connections() == 1);
    CHECK(host.closedByPeer() == 0);
}

TEST_CASE("when the host closes the link its instances fail, and the next start connects again and writes "
          "the leaf's files again",
          "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work"), hello("/unit/work")});
    auto units = connected(user, place);
    REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPerSecUSec", std::uint64_t{300'000}},
                                                     {"MemoryMax", std::uint64_t{1} << 30}}));
    REQUIRE(units->startTransientUnit("nicer-work-1.service", instanceProps({"sleep", "100"}), true));

    host.closeLink();
    CHECK(pollUntil(
        [&] { return stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Failed); },
        kUnitsWait, kUnitsStep));
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Inactive));
    place.clear();

    REQUIRE(units->startTransientUnit("nicer-work-2.service", instanceProps({"sleep", "100"}), true));
    CHECK(host.connections() == 2);
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Active));
    CHECK(stateIs(*units, "nicer-work-2.service", nicer::usermanager::UnitState::Active));
    CHECK(place.read("cpu.max") == "30000 100000");
    CHECK(place.read("memory.max") == "1073741824");
    REQUIRE(host.starts().size() == 2);
    CHECK(host.starts()[1].fields[0] == "nicer-work-2.service");
}

// The link's end is read before the link is used: a host that ended since is connected to again, never sent
// to a closed descriptor.
TEST_CASE("a start right after the host closed the link connects again", "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work"), hello("/unit/work")});
    auto units = connected(user, place);
    REQUIRE(units->startTransientUnit("nicer-work-1.service", instanceProps({"sleep", "100"}), true));
    host.closeLink(); // nicerd's side has not looked at the link since

    auto started = units->startTransientUnit("nicer-work-2.service", instanceProps({"sleep", "100"}), true);
    INFO((started ? std::string() : started.error().message));
    CHECK(started);
    CHECK(host.connections() == 2);
    CHECK(stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Failed));
}

TEST_CASE("when the leaf does not take what was set before, connecting again fails and leaves no link",
          "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    // The second host names a leaf that is not there: nothing set before can be written to it.
    FakeWorkHost host(place.socket, {hello("/unit/work"), hello("/gone/work")});
    auto units = connected(user, place);
    REQUIRE(units->setUnitProperties("nicer.slice", {{"CPUQuotaPerSecUSec", std::uint64_t{300'000}}}));
    REQUIRE(units->startTransientUnit("nicer-work-1.service", instanceProps({"sleep", "100"}), true));
    host.closeLink();
    REQUIRE(pollUntil(
        [&] { return stateIs(*units, "nicer-work-1.service", nicer::usermanager::UnitState::Failed); },
        kUnitsWait, kUnitsStep));

    auto started = units->startTransientUnit("nicer-work-2.service", instanceProps({"sleep", "100"}), true);
    REQUIRE_FALSE(started);
    CHECK_THAT(started.error().message,
               Catch::Contains("did not take") && Catch::Contains("/gone/work/cpu.max"));
    CHECK(host.connections() == 2);
    // The host sees its link closed: it stops what it runs, since nothing runs without its cap.
    CHECK(pollUntil([&] { return host.closedByPeer() == 1; }, kUnitsWait, kUnitsStep));
    CHECK(stateIs(*units, "nicer.slice", nicer::usermanager::UnitState::Inactive));
    CHECK(host.starts().size() == 1);
}

TEST_CASE("an instance is frozen and thawed through its own leaf's cgroup.freeze, never the user manager",
          "[WorkHostUnits]") {
    Place place;
    FakeUnitManager user;
    FakeWorkHost host(place.socket, {hello("/unit/work")});
    auto units = connected(user, place);
    // Frozen only while it runs there.
    auto early = units->freezeUnit("nicer-work-2.service");
    REQUIRE_FALSE(early);
    CHECK_THAT(early.error().message, Catch::Contains("does not run in the root idle slice"));

    REQUIRE(units->startTransientUnit("nicer-work-2.service", instanceProps({"sleep", "100"}), true));
    const auto instanceLeaf = place.leaf / "nicer-work-2.service";
    fs::create_directories(instanceLeaf); // the host makes it; here, a plain directory
    std::ofstream(instanceLeaf / "cgroup.freeze").flush();
    const auto freezeFile = [&] {
        std::ifstream in(instanceLeaf / "cgroup.freeze");
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    REQUIRE(units->freezeUnit("nicer-work-2.service"));
    CHECK(freezeFile() == "1");
    REQUIRE(units->thawUnit("nicer-work-2.service"));
    CHECK(freezeFile() == "0");
    CHECK(place.read("cgroup.freeze").empty()); // the work's own leaf untouched
    CHECK(user.calls().empty());
}
