// BoincSession keeping BOINC's clock (core/daemon/BoincClock.h) on a real sd-event loop, against
// FakeGuiRpcServer: one running task whose elapsed and CPU times the test sets in get_results, its app
// version in get_state. Options::stopClient records each stop (true) and continue (false) with its time, and
// models the real client's SIGSTOP: while stopped, the fake answers nothing (a request waits, as in a stopped
// client's socket) until the continue. A test may also hold back the replies to one request (a gate), to act
// while a reading is under way. Short polls, stops and windows keep each case under a second.

#include "EventLoop.h"
#include "TempDir.h"
#include "boinc/FakeGuiRpcServer.h"
#include "boinc/GlobalPrefsOverride.h"
#include "boinc/GuiRpcProtocol.h"
#include "boinc/Replies.h"
#include "daemon/BoincSession.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace nicer;
using namespace nicer::daemon;
using nicer::test::FakeGuiRpcServer;
using nicer::test::recordedReply;
using nicer::test::wrapReply;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kPassword = "secret";
const std::string kUrl = "http://127.0.0.1:8080/test/";
constexpr auto kPoll = 50ms;
constexpr auto kStopSpan = 300ms;
constexpr auto kWindow = 100ms;
/// get_state's bound over the app version's speed: 1e13 / 1e10.
constexpr double kLimitSeconds = 1000.0;

double milliseconds(std::chrono::milliseconds span) {
    return std::chrono::duration<double, std::milli>(span).count();
}

/// get_results: the one task, running, with BOINC's @p elapsed time and its @p cpu time.
std::string results(double elapsed, double cpu) {
    return wrapReply("<results>\n<result>\n"
                     "<name>wu_1_0</name>\n<wu_name>wu_1</wu_name>\n<version_num>100</version_num>\n"
                     "<project_url>" +
                     kUrl +
                     "</project_url>\n<state>2</state>\n"
                     "<active_task>\n<active_task_state>1</active_task_state>\n"
                     "<scheduler_state>2</scheduler_state>\n<current_cpu_time>" +
                     std::to_string(cpu) + "</current_cpu_time>\n<elapsed_time>" + std::to_string(elapsed) +
                     "</elapsed_time>\n</active_task>\n</result>\n</results>");
}

/// get_state: the task's project, app version (a GPU one with @p gpu), work unit and result.
std::string state(bool gpu) {
    return wrapReply("<client_state>\n<project><master_url>" + kUrl +
                     "</master_url></project>\n"
                     "<app><name>app</name></app>\n"
                     "<app_version><app_name>app</app_name><version_num>100</version_num>"
                     "<avg_ncpus>1.0</avg_ncpus><flops>1e10</flops>" +
                     std::string(gpu ? "<coproc><type>NVIDIA</type><count>1</count></coproc>" : "") +
                     "</app_version>\n"
                     "<workunit><name>wu_1</name><app_name>app</app_name><version_num>100</version_num>"
                     "<rsc_fpops_bound>1e13</rsc_fpops_bound></workunit>\n"
                     "<result><name>wu_1_0</name><wu_name>wu_1</wu_name><version_num>100</version_num>"
                     "<project_url>" +
                     kUrl + "</project_url></result>\n</client_state>");
}

const std::string kAttachInProgress =
    wrapReply("<project_attach_reply>\n    <error_num>-204</error_num>\n</project_attach_reply>");

/// What the fake client says and does, changed by the test while the server's thread answers.
struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::string, std::string> replies; ///< by request name, before the standard ones
    std::set<std::string> gated;                ///< requests whose replies are held back
    bool stopped = false;
};

/// One call of Options::stopClient.
struct StopCall {
    bool stop = false;
    Clock::time_point at;
    std::size_t requests = 0; ///< the requests the fake had received by then
};

/// A BoincSession on a loop of its own against a fake client with one task.
class Harness {
public:
    explicit Harness(double elapsed, double cpu, bool gpu = false)
        : shared(std::make_shared<Shared>())
        , server(handler(shared))
        , loop(test::newLoop()) {
        std::ofstream(dir.path / "gui_rpc_auth.cfg") << kPassword << "\n";
        setReply("get_results", results(elapsed, cpu));
        setReply("get_state", state(gpu));
    }
    ~Harness() {
        session.reset();
        // A request still held back would keep the server's thread from ending.
        const std::lock_guard lock(shared->mutex);
        shared->stopped = false;
        shared->gated.clear();
        shared->changed.notify_all();
    }
    Harness(const Harness&) = delete;
    Harness& operator=(const Harness&) = delete;

    void start() {
        BoincSession::Options options;
        options.client.dir = dir.path;
        options.client.rpcPort = server.port();
        options.procNetDev = dir.path / "no-net-dev";
        options.pollInterval = kPoll;
        options.clock.stopSpan = kStopSpan;
        options.clock.window = window;
        options.stopClient = [this](bool stop) -> Result<void> {
            calls.push_back({stop, Clock::now(), server.requests().size()});
            if (stop && refuseStop) {
                return Error{"the BOINC client's process (boinc) is not among the work's"};
            }
            const std::lock_guard lock(shared->mutex);
            shared->stopped = stop;
            shared->changed.notify_all();
            return {};
        };
        auto started = BoincSession::start(loop.get(), std::move(options), nullptr);
        REQUIRE(started.ok());
        session = std::move(*started);
    }

    void setReply(const std::string& name, std::string reply) {
        const std::lock_guard lock(shared->mutex);
        shared->replies[name] = std::move(reply);
    }
    void setTask(double elapsed, double cpu) { setReply("get_results", results(elapsed, cpu)); }
    /// Holds back the replies to the requests named @p name, or lets them go.
    void gate(const std::string& name, bool closed) {
        const std::lock_guard lock(shared->mutex);
        if (closed) {
            shared->gated.insert(name);
        } else {
            shared->gated.erase(name);
        }
        shared->changed.notify_all();
    }

    template <typename Condition>
    bool runUntil(Condition&& condition, std::chrono::milliseconds timeout = 5s) {
        return test::runLoopUntil(loop.get(), std::forward<Condition>(condition), timeout);
    }
    void runFor(std::chrono::milliseconds span) {
        test::runLoopUntil(
            loop.get(), [] { return false; }, span);
    }

    std::size_t countCalls(bool stop) const {
        return static_cast<std::size_t>(
            std::ranges::count_if(calls, [stop](const StopCall& c) { return c.stop == stop; }));
    }
    /// The index of the first call @p stop at or after @p from.
    std::optional<std::size_t> findCall(bool stop, std::size_t from = 0) const {
        for (std::size_t i = from; i < calls.size(); ++i) {
            if (calls[i].stop == stop) {
                return i;
            }
        }
        return std::nullopt;
    }
    /// Runs until the session calls stopClient(@p stop) at or after the call @p from; that call's index.
    std::size_t runUntilCall(bool stop, std::size_t from = 0) {
        REQUIRE(runUntil([&] { return findCall(stop, from).has_value(); }));
        return *findCall(stop, from);
    }
    std::size_t requestsNamed(const std::string& name) const {
        const auto all = server.requests();
        return static_cast<std::size_t>(
            std::ranges::count_if(all, [&](const std::string& r) { return boinc::requestName(r) == name; }));
    }
    /// Runs until the session has read the task's limit from get_state.
    void runUntilLimitKnown() {
        REQUIRE(runUntil([&] {
            return !session->status().tasks.empty() && session->status().tasks[0].elapsedLimitSeconds > 0.0;
        }));
    }
    /// Runs until the task has been read @p count more times.
    void runReadings(std::size_t count) {
        const std::size_t readings = requestsNamed("get_results");
        REQUIRE(runUntil([&] { return requestsNamed("get_results") >= readings + count; }));
        runFor(kPoll); // the last reading's end, where the session judges the task
    }

    std::chrono::milliseconds window = kWindow; ///< Options::clock.window, read by start()
    bool refuseStop = false; ///< stopClient(true) fails, as when the client's process is not found
    test::TempDir dir{"nicer-boinc-session"};
    std::shared_ptr<Shared> shared;
    FakeGuiRpcServer server;
    libsystemd::EventPtr loop;
    std::vector<StopCall> calls;
    std::unique_ptr<BoincSession> session;

private:
    static FakeGuiRpcServer::Handler handler(const std::shared_ptr<Shared>& fake) {
        auto nicer = boinc::withNicerSettings("");
        REQUIRE(nicer.ok());
        const auto success = wrapReply("<success/>");
        auto standard = FakeGuiRpcServer::standard(
            kPassword, {{"get_cc_status", recordedReply("own-get_cc_status.xml")},
                        {"get_file_transfers", wrapReply("<file_transfers>\n</file_transfers>")},
                        {"get_project_status", recordedReply("own-get_project_status.xml")},
                        {"get_notices", recordedReply("own-get_notices-empty.xml")},
                        {"get_messages", recordedReply("own-get_messages.xml")},
                        {"get_global_prefs_override", wrapReply(*nicer)},
                        {"set_global_prefs_override", success},
                        {"read_global_prefs_override", success},
                        {"project_attach", recordedReply("own-project_attach.xml")},
                        {"project_attach_poll", recordedReply("own-project_attach_poll-done.xml")},
                        {"project_detach", success}});
        return [fake, standard](const std::string& request, int connection) {
            const std::string name = boinc::requestName(request);
            std::unique_lock lock(fake->mutex);
            // A stopped client reads nothing: the request waits in its socket until the continue.
            fake->changed.wait(lock, [&] { return !fake->stopped && !fake->gated.contains(name); });
            if (name == "set_global_prefs_override") {
                // As the client: the override set is the one it answers with from now on.
                const auto begin = request.find("<global_preferences");
                const auto end = request.rfind("</global_preferences>");
                if (begin != std::string::npos && end != std::string::npos) {
                    fake->replies["get_global_prefs_override"] =
                        wrapReply(request.substr(begin, end + std::strlen("</global_preferences>") - begin));
                }
            }
            if (const auto reply = fake->replies.find(name); reply != fake->replies.end()) {
                return FakeGuiRpcServer::Answer::reply(reply->second);
            }
            lock.unlock();
            return standard(request, connection);
        };
    }
};

double millisecondsBetween(const StopCall& a, const StopCall& b) {
    return std::chrono::duration<double, std::milli>(b.at - a.at).count();
}

} // namespace

TEST_CASE("BoincSession: a task far behind its CPU time stops the client for a span, asking it nothing",
          "[BoincSession]") {
    Harness h(200.0, 20.0); // 200 > 1.1 x 20 + 10
    h.start();
    // The session continues a client that an earlier nicerd may have left stopped.
    REQUIRE(h.calls.size() == 1);
    CHECK_FALSE(h.calls[0].stop);

    const std::size_t stop = h.runUntilCall(true);
    CHECK(stop == 1);
    const std::size_t resumed = h.runUntilCall(false, stop);
    CHECK(resumed == stop + 1);
    // The stop lasts about stopSpan: its timer is armed from the loop's time, a little before the stop was
    // made, so the span measured here may be short by what the loop did first (more under a sanitizer); no
    // bound on a loaded machine's lateness.
    const double span = millisecondsBetween(h.calls[stop], h.calls[resumed]);
    CHECK(span >= 0.5 * milliseconds(kStopSpan));
    // Nothing was asked of the stopped client: no call was under way, none was sent.
    CHECK(h.calls[resumed].requests == h.calls[stop].requests);

    // The readings after the stop say how the clock is kept.
    REQUIRE(h.runUntil([&] { return !h.session->status().clock.empty(); }));
    CHECK_THAT(h.session->status().clock, Catch::StartsWith("kept: BOINC counted"));
    REQUIRE(h.session->status().tasks.size() == 1);
    const auto& task = h.session->status().tasks[0];
    CHECK(task.state == nicer::api::BoincTaskState::Running);
    CHECK(task.elapsedLimitSeconds == Approx(kLimitSeconds));
    CHECK(task.elapsedSeconds == Approx(200.0));
    CHECK(task.cpuSeconds == Approx(20.0));
}

TEST_CASE("BoincSession: a task at full speed never stops the client", "[BoincSession]") {
    Harness h(50.0, 49.0); // 50 < 1.1 x 49 + 10
    h.start();
    h.runUntilLimitKnown();
    h.runReadings(4);
    CHECK(h.countCalls(true) == 0);
    REQUIRE(h.calls.size() == 1); // only start()'s continue
    CHECK_FALSE(h.calls[0].stop);
    CHECK(h.session->status().clock.empty());

    // The same session stops the client once the task falls behind.
    h.setTask(200.0, 49.0);
    h.runUntilCall(true);
}

TEST_CASE("BoincSession: the clock switched off while the client is stopped continues it at once",
          "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.start();
    const std::size_t stop = h.runUntilCall(true);
    REQUIRE(h.calls.size() == stop + 1);

    h.session->setKeepClock(false);
    REQUIRE(h.calls.size() == stop + 2);
    CHECK_FALSE(h.calls.back().stop);
    CHECK(h.session->status().clock.empty());

    // Readings of the task, still far behind, go on past the end of the former stop's span, with no
    // further stop or continue.
    const auto until = h.calls[stop].at + kStopSpan + 2 * kWindow;
    h.runReadings(2);
    h.runUntil([&] { return Clock::now() >= until; });
    CHECK(h.calls.size() == stop + 2);
    CHECK(h.session->status().clock.empty());

    // Switched on again, it keeps the clock again.
    h.session->setKeepClock(true);
    h.runUntilCall(true, stop + 2);
}

TEST_CASE("BoincSession: a stop that ends while the work is held continues the client on release",
          "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.start();
    const std::size_t stop = h.runUntilCall(true);
    const std::size_t requests = h.server.requests().size();

    h.session->setHeld(true, "paused by the volunteer");
    CHECK(h.session->status().state == api::BoincState::Held);
    CHECK(h.session->status().detail == "paused by the volunteer");
    // Well past the stop's span: no continue (a signal would thaw the work where freezing is SIGSTOP), and
    // nothing asked of the frozen client.
    h.runFor(kStopSpan + 3 * kWindow);
    CHECK(h.calls.size() == stop + 1);
    CHECK(h.server.requests().size() == requests);

    h.session->setHeld(false, "");
    REQUIRE(h.calls.size() == stop + 2);
    CHECK_FALSE(h.calls.back().stop);
    // Polls resume.
    CHECK(h.runUntil([&] { return h.server.requests().size() > requests; }));
}

TEST_CASE("BoincSession: a release while the stop still runs stops the client again, and the stop ends",
          "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.start();
    const std::size_t stop = h.runUntilCall(true);

    h.session->setHeld(true, "paused by the volunteer");
    h.runFor(kPoll);
    CHECK(h.calls.size() == stop + 1);
    h.session->setHeld(false, "");
    // Where the thaw was SIGCONT, it continued the client too: it is stopped again.
    REQUIRE(h.calls.size() == stop + 2);
    CHECK(h.calls.back().stop);

    // The stop still ends stopSpan after it began.
    const std::size_t resumed = h.runUntilCall(false, stop);
    CHECK(resumed == stop + 2);
    const double span = millisecondsBetween(h.calls[stop], h.calls[resumed]);
    CHECK(span >= 0.5 * milliseconds(kStopSpan)); // as in the first case: about a span, never at once
}

TEST_CASE("BoincSession: a GPU task far behind its CPU time never stops the client", "[BoincSession]") {
    Harness h(200.0, 20.0, true);
    h.start();
    h.runUntilLimitKnown();
    CHECK(h.session->status().tasks[0].elapsedLimitSeconds == Approx(kLimitSeconds));
    h.runReadings(4);
    CHECK(h.countCalls(true) == 0);
    CHECK(h.calls.size() == 1);
    CHECK(h.session->status().clock.empty());
}

TEST_CASE("BoincSession: a reading that ends while the work is held does not stop the client",
          "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.gate("get_messages", true); // the last call of the first reading
    h.start();
    REQUIRE(h.runUntil([&] { return h.requestsNamed("get_messages") == 1; }));
    h.session->setHeld(true, "paused by the volunteer");
    h.gate("get_messages", false);
    h.runFor(kStopSpan);
    CHECK(h.countCalls(true) == 0);
    CHECK(h.requestsNamed("get_messages") == 1); // nothing asked while held
    CHECK(h.session->status().state == api::BoincState::Held);

    // Released, the next reading stops it.
    h.session->setHeld(false, "");
    h.runUntilCall(true);
}

TEST_CASE("BoincSession: an attach under way keeps the client running until it is done", "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.setReply("project_attach_poll", kAttachInProgress);
    h.gate("get_messages", true);
    h.start();
    REQUIRE(h.runUntil([&] { return h.requestsNamed("get_messages") == 1; }));
    // The attach is sent while the first reading ends: that reading finds it pending.
    std::optional<Result<void>> attached;
    h.session->attach(kUrl, "0123456789abcdef", [&](Result<void> r) { attached.emplace(std::move(r)); });
    REQUIRE_FALSE(attached.has_value());
    h.gate("get_messages", false);
    // Then BOINC works on it, polled at each poll, while the task is read again and again.
    REQUIRE(h.runUntil([&] { return h.requestsNamed("project_attach_poll") >= 1; }));
    h.runReadings(4);
    CHECK(h.countCalls(true) == 0);
    CHECK_FALSE(attached.has_value());

    h.setReply("project_attach_poll", recordedReply("own-project_attach_poll-done.xml"));
    REQUIRE(h.runUntil([&] { return attached.has_value(); }));
    CHECK(attached->ok());
    h.runUntilCall(true);
}

TEST_CASE("BoincSession: a stop that fails says so in the clock's text and is never continued",
          "[BoincSession]") {
    Harness h(200.0, 20.0);
    h.refuseStop = true;
    h.start();
    h.runUntilCall(true);
    h.runFor(kStopSpan + kWindow);
    CHECK_THAT(h.session->status().clock, Catch::StartsWith("cannot keep BOINC's clock: ") &&
                                              Catch::Contains("is not among the work's"));
    CHECK(h.countCalls(false) == 1); // start()'s
    CHECK(h.session->status().state == api::BoincState::Running);
}

// Bugs these tests found, fixed.

TEST_CASE("BoincSession: after a release from a hold the client runs a window before the next stop",
          "[BoincSession]") {
    // The stop's span ends while the work is held: the client is continued at the release, and its window
    // starts then (it was judged again at the first reading after the release, on figures from before).
    Harness h(200.0, 20.0);
    h.window = 1s; // far above the first reading's delay after the release (a poll, 50 ms), even under load
    h.start();
    const std::size_t stop = h.runUntilCall(true);
    h.session->setHeld(true, "paused by the volunteer");
    h.runFor(kStopSpan + h.window + kWindow);
    h.session->setHeld(false, "");
    REQUIRE(h.calls.size() == stop + 2);
    const std::size_t next = h.runUntilCall(true, stop + 2);
    const double ran = millisecondsBetween(h.calls[stop + 1], h.calls[next]);
    INFO("the client ran " << ran << " ms after the release");
    CHECK(ran >= milliseconds(h.window));
}

TEST_CASE("BoincSession: a detach asked while the client is stopped ends the stop first, and is answered",
          "[BoincSession]") {
    // detach() (and attach()) sent at once: a client stopped for the clock cannot answer, and with the
    // production stopSpan (15 s) the call timed out after GuiRpcClient's 5 s and the caller was told that
    // BOINC did not detach.
    Harness h(200.0, 20.0);
    h.start();
    const std::size_t stop = h.runUntilCall(true);
    std::optional<Result<void>> detached;
    h.session->detach(kUrl, [&](Result<void> r) { detached.emplace(std::move(r)); });
    const std::size_t resumed = h.runUntilCall(false, stop);
    CHECK(h.calls[resumed].requests == h.calls[stop].requests);
    REQUIRE(h.runUntil([&] { return detached.has_value(); }));
    CHECK(detached->ok());
}

TEST_CASE("BoincSession: a session that ends after its stop ended while held continues the client",
          "[BoincSession]") {
    // The destructor continued a client only while the clock's stop ran, not one whose stop ended while the
    // work was held (left to the release, which does not come).
    Harness h(200.0, 20.0);
    h.start();
    const std::size_t stop = h.runUntilCall(true);
    h.session->setHeld(true, "paused by the volunteer");
    h.runFor(kStopSpan + 3 * kWindow);
    REQUIRE(h.calls.size() == stop + 1);
    h.session.reset();
    REQUIRE(h.calls.size() == stop + 2);
    CHECK_FALSE(h.calls.back().stop);
}

TEST_CASE(
    "BoincSession: the profile's CPUs reach BOINC as max_ncpus_pct in nicer's override, once per change",
    "[BoincSession]") {
    Harness h(20.0, 20.0);
    h.start();
    const auto sentWith = [&](const std::string& value) {
        const auto all = h.server.requests();
        return std::ranges::any_of(all, [&](const std::string& r) {
            return boinc::requestName(r) == "set_global_prefs_override" &&
                   r.find("<max_ncpus_pct>" + value + "</max_ncpus_pct>") != std::string::npos;
        });
    };
    h.session->setMaxNcpusPct(50.0);
    REQUIRE(h.runUntil([&] { return sentWith("50"); }));
    const std::size_t sets = h.requestsNamed("set_global_prefs_override");
    h.session->setMaxNcpusPct(50.0); // no change: nothing sent
    h.runFor(kPoll);
    CHECK(h.requestsNamed("set_global_prefs_override") == sets);
    h.session->setMaxNcpusPct(100.0);
    REQUIRE(h.runUntil([&] { return sentWith("100"); }));
}
