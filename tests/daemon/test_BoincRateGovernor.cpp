#include "daemon/BoincRateGovernor.h"
#include "kernel/TcpSockets.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

using namespace nicer;
using namespace std::chrono_literals;
using daemon::BoincRateGovernor;
using daemon::TransferCounter;

namespace {

api::BoincTransfer transfer(const std::string& name, bool upload, double done) {
    return {name, "http://p.example/", upload, 1e9, done, 0.0, nicer::api::BoincTransferState::Active};
}

} // namespace

TEST_CASE("BOINC's transfers add up to monotonic counters, each from where it was first seen",
          "[BoincRateGovernor]") {
    TransferCounter counter;
    counter.update({transfer("a.in", false, 5000)}); // moved before it was first seen: not counted
    CHECK(counter.downloaded() == 0);
    counter.update({transfer("a.in", false, 8000), transfer("b.out", true, 100)});
    CHECK(counter.downloaded() == 3000);
    CHECK(counter.uploaded() == 0);
    counter.update({transfer("a.in", false, 9000), transfer("b.out", true, 600)});
    CHECK(counter.downloaded() == 4000);
    CHECK(counter.uploaded() == 500);
    // a.in finished and went away; a retry of b.out starts over from zero: nothing counts until it passes
    // where it was.
    counter.update({transfer("b.out", true, 0)});
    counter.update({transfer("b.out", true, 400)});
    CHECK(counter.uploaded() == 500);
    counter.update({transfer("b.out", true, 900)});
    CHECK(counter.uploaded() == 800);
    CHECK(counter.downloaded() == 4000);
    // The same name in the other direction is another transfer.
    counter.update({transfer("b.out", true, 900), transfer("b.out", false, 10)});
    counter.update({transfer("b.out", true, 900), transfer("b.out", false, 20)});
    CHECK(counter.downloaded() == 4010);
}

TEST_CASE("the governor pushes after the controllers' first step, then only changes beyond the hysteresis",
          "[BoincRateGovernor]") {
    const daemon::BoincRateOptions options;
    BoincRateGovernor governor(options);
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    // Before the first step the answer is only the floor: BOINC keeps its own limit.
    CHECK_FALSE(governor.onSample({t0, 0, 0, {}, std::nullopt}));
    CHECK_FALSE(governor.pushed());

    // An idle link, polled every 500 ms: at most one push per controller period (2 s), each a change beyond
    // the hysteresis.
    int pushes = 0;
    std::optional<daemon::TransferLimits> last;
    for (int i = 1; i <= 120; ++i) {
        if (auto pushed = governor.onSample({t0 + i * 500ms, 0, 0, {}, std::nullopt})) {
            ++pushes;
            if (last) {
                CHECK(std::abs(pushed->down - last->down) > options.hysteresis * last->down);
            }
            last = pushed;
        }
    }
    CHECK(pushes >= 1);
    CHECK(pushes <= 120 / 4);
    // What was not pushed differs from what was by at most the hysteresis (or it would have gone out).
    REQUIRE(governor.pushed());
    CHECK(std::abs(governor.wanted().down - governor.pushed()->down) <=
          options.hysteresis * governor.pushed()->down + 1);
}

TEST_CASE("the user's traffic cuts BOINC's download limit within seconds, and it grows back after",
          "[BoincRateGovernor]") {
    // A 10 MB/s link. BOINC downloads as fast as its limit allows in what the user leaves; the user's
    // stream, when on, takes 60% of the link. Sampled every second, as nicerd polls.
    constexpr double kLink = 10e6;
    BoincRateGovernor governor;
    auto now = std::chrono::steady_clock::time_point{} + 1h;
    double rx = 0, boincBytes = 0;
    double limit = kLink; // BOINC's own default: no limit
    REQUIRE_FALSE(governor.onSample({now, 0, 0, {transfer("wu.in", false, 0)}, std::nullopt}));
    const auto run = [&](int seconds, double user) {
        for (int i = 0; i < seconds; ++i) {
            now += 1s;
            const double boinc = std::min(limit, kLink - user);
            boincBytes += boinc;
            rx += (boinc + user) * 1.05;
            if (auto pushed = governor.onSample({now,
                                                 static_cast<std::uint64_t>(rx),
                                                 0,
                                                 {transfer("wu.in", false, boincBytes)},
                                                 std::nullopt})) {
                limit = pushed->down;
            }
        }
    };
    run(60, 0.0);
    const double idleLimit = limit;
    CHECK(idleLimit >= 0.7 * kLink); // an idle link is BOINC's, less the reserve band
    run(15, 0.6 * kLink);
    CHECK(limit <= 0.35 * kLink); // the user's 60% plus headroom and the band stay free
    run(60, 0.0);
    CHECK(limit >= 0.7 * kLink);
}

namespace {

/// One of BOINC's sockets as the kernel would report it.
kernel::TcpSocketInfo boincSocket(double received, double acked = 0,
                                  std::chrono::milliseconds receiveRtt = 0ms, double unread = 0) {
    kernel::TcpSocketInfo info;
    info.unread = static_cast<std::uint32_t>(unread);
    info.inode = 4242;
    info.bytesReceived = static_cast<std::uint64_t>(received);
    info.bytesAcked = static_cast<std::uint64_t>(acked);
    info.receiveRtt = receiveRtt;
    info.rtt = receiveRtt;
    return info;
}

} // namespace

TEST_CASE("what fills BOINC's receive buffers is BOINC's traffic, not the user's", "[BoincRateGovernor]") {
    // BOINC's libcurl reads no faster than its limit, but the kernel fills the socket's receive buffer (here
    // up to 16 MB, as TCP's autotuning grows it) at the link's speed. By BOINC's own count those bytes have
    // not arrived yet; on the interface and in the socket's counters they have. Counted as the user's, they
    // would hold BOINC at the floor.
    constexpr double kLink = 10e6;
    constexpr double kBuffer = 16e6;
    struct Outcome {
        double limit = 0.0;    ///< at the end
        double userSeen = 0.0; ///< the most of the link the controller took for the user's traffic
    };
    const auto idleLink = [&](bool withSockets) {
        BoincRateGovernor governor;
        auto now = std::chrono::steady_clock::time_point{} + 1h;
        double rx = 0, arrived = 0, read = 0, unread = 0;
        Outcome outcome;
        outcome.limit = 16 * 1024; // as the first push leaves it
        for (int i = 0; i <= 60; ++i) {
            const double arriving = std::min(kLink, kBuffer - unread + std::min(outcome.limit, unread));
            unread += arriving;
            arrived += arriving;
            const double taken = std::min(outcome.limit, unread);
            unread -= taken;
            read += taken;
            rx += arriving * 1.05;
            BoincRateGovernor::Sample sample{
                now, static_cast<std::uint64_t>(rx), 0, {transfer("wu.in", false, read)}, std::nullopt};
            if (withSockets) {
                sample.sockets = std::vector{boincSocket(arrived, 0, 0ms, unread)};
            }
            if (auto pushed = governor.onSample(sample)) {
                outcome.limit = pushed->down;
            }
            outcome.userSeen = std::max(outcome.userSeen, governor.downController().status().foregroundShare);
            now += 1s;
        }
        return outcome;
    };
    const auto counted = idleLink(true);
    CHECK(counted.limit >= 0.7 * kLink);
    CHECK(counted.userSeen < 0.05);
    // By BOINC's own counts, the buffer's filling reads as a user's download that takes most of the link.
    CHECK(idleLink(false).userSeen > 0.3);
}

TEST_CASE("a queue on the link cuts BOINC's limit even while the user's traffic cannot get through",
          "[BoincRateGovernor]") {
    // BOINC's connections fill the bottleneck's queue; a download the user starts gets almost nothing (2% of
    // the link, below what counts as traffic) and shows only as a longer round trip on BOINC's sockets.
    constexpr double kLink = 10e6;
    BoincRateGovernor governor;
    auto now = std::chrono::steady_clock::time_point{} + 1h;
    double rx = 0, received = 0, limit = kLink;
    const auto run = [&](int seconds, double user, std::chrono::milliseconds rtt) {
        for (int i = 0; i < seconds; ++i) {
            now += 1s;
            const double boinc = std::min(limit, kLink - user);
            received += boinc;
            rx += (boinc + user) * 1.05;
            if (auto pushed = governor.onSample({now,
                                                 static_cast<std::uint64_t>(rx),
                                                 0,
                                                 {},
                                                 std::vector{boincSocket(received, 0, rtt)}})) {
                limit = pushed->down;
            }
        }
    };
    run(60, 0.0, 20ms); // alone, below its capacity: no queue
    CHECK(limit >= 0.7 * kLink);
    run(10, 0.02 * kLink, 80ms); // 60 ms of queue, far above the 25 ms target
    CHECK(limit <= 0.4 * kLink);
    CHECK(governor.downController().status().queueingDelay.value() > 50ms);
}

TEST_CASE("an upload counts when the peer acknowledges it, not when BOINC writes it", "[BoincRateGovernor]") {
    BoincRateGovernor governor;
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    // BOINC wrote 4 MB at once into a send buffer the link drains at 1 MB/s: the up controller sees 1 MB/s of
    // BOINC's and nothing of anyone else's.
    governor.onSample({t0, 0, 0, {transfer("r.out", true, 0)}, std::vector{boincSocket(0, 0)}});
    double tx = 0;
    for (int i = 1; i <= 4; ++i) {
        tx += 1e6 * 1.05;
        governor.onSample({t0 + i * 1s,
                           0,
                           static_cast<std::uint64_t>(tx),
                           {transfer("r.out", true, 4e6)},
                           std::vector{boincSocket(0, i * 1e6)}});
    }
    const auto& up = governor.upController().status();
    CHECK(up.ourRate == Approx(1e6).epsilon(0.01));
    CHECK(up.foregroundShare < 0.05);
}

TEST_CASE("while BOINC's receive buffers grow, it may read only what the controller allows less the growth",
          "[BoincRateGovernor]") {
    // The link is BOINC's alone at 10 MB/s, and 4 MB/s of it goes into a growing receive buffer: reading at
    // the controller's rate would let BOINC's sender keep the link full. The limit pushed is the
    // controller's rate less the growth, so the buffer fills and the link then carries what BOINC reads.
    BoincRateGovernor governor;
    auto now = std::chrono::steady_clock::time_point{} + 1h;
    double rx = 0, received = 0, unread = 0;
    for (int i = 0; i <= 20; ++i) {
        received += 10e6;
        unread += 4e6;
        rx += 10e6 * 1.05;
        governor.onSample(
            {now, static_cast<std::uint64_t>(rx), 0, {}, std::vector{boincSocket(received, 0, 0ms, unread)}});
        now += 1s;
    }
    const double rate = governor.downController().status().rate;
    REQUIRE(rate > 4e6 + 16 * 1024);
    CHECK(governor.wanted().down == Approx(rate - 4e6).epsilon(0.01));
    // A full buffer (no growth) gives the controller's rate back.
    for (int i = 0; i <= 4; ++i) {
        received += 10e6;
        rx += 10e6 * 1.05;
        governor.onSample(
            {now, static_cast<std::uint64_t>(rx), 0, {}, std::vector{boincSocket(received, 0, 0ms, unread)}});
        now += 1s;
    }
    CHECK(governor.wanted().down == Approx(governor.downController().status().rate));
}
