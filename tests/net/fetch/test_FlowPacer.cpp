#include "net/fetch/FlowPacer.h"
#include "net/rate/RateController.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <vector>

using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

// The pacer's clock, moved by hand.
struct FakeClock {
    FlowPacer::Clock::time_point now = FlowPacer::Clock::time_point(1h);
    FlowPacer::Now function() {
        return [this] { return now; };
    }
};

// A nice mode that answers a fixed rate and keeps what it was told.
struct FixedRate : RateController {
    std::optional<double> rate;
    std::vector<LinkSample> samples;
    std::optional<double> onSample(const LinkSample& sample) override {
        samples.push_back(sample);
        return rate;
    }
};

FetcherOptions options() {
    FetcherOptions o;
    o.procNetDev = "/nonexistent/net/dev"; // no interface counters in unit tests
    return o;
}

} // namespace

TEST_CASE("without a limit the pacer leaves flow control to the session and acknowledges everything") {
    FakeClock clock;
    FlowPacer pacer(options(), clock.function());
    pacer.start();
    CHECK_FALSE(pacer.manualFlowControl());
    CHECK_FALSE(pacer.rateLimit());
    CHECK_FALSE(pacer.windowsShrunk());
    CHECK(pacer.connectionWindow() == Http2Session::Options{}.connectionWindow);
    CHECK(pacer.streamWindow() == Http2Session::Options{}.streamWindow);
    CHECK_FALSE(pacer.sessionOptions().manualFlowControl);
    CHECK(pacer.take(10'000'000) == 10'000'000);
    CHECK(pacer.tickInterval() == options().sampleInterval);
}

TEST_CASE("a maximum rate shrinks the windows and paces acknowledgements to the rate") {
    FakeClock clock;
    auto o = options();
    o.maxRate = 10e6; // 10 MB/s: windows of rate x 25 ms = 250 kB
    FlowPacer pacer(o, clock.function());
    pacer.start();
    CHECK(pacer.manualFlowControl());
    CHECK(pacer.sessionOptions().manualFlowControl);
    CHECK(pacer.rateLimit() == 10e6);
    CHECK(pacer.windowsShrunk());
    CHECK(pacer.connectionWindow() == 250'000);
    CHECK(pacer.streamWindow() == 250'000);
    CHECK(pacer.tickInterval() == o.pacingInterval);

    // The bucket starts empty, then fills at the rate.
    CHECK(pacer.take(1'000'000) == 0);
    clock.now += 10ms;
    CHECK(pacer.take(1'000'000) == 100'000);
    CHECK(pacer.take(1'000'000) == 0);
    // Bytes charged (discarded, released) are a debt that later takes pay first.
    pacer.charge(50'000);
    clock.now += 10ms;
    CHECK(pacer.take(1'000'000) == 50'000);
}

TEST_CASE("a slow rate keeps windows of at least 64 KiB") {
    FakeClock clock;
    auto o = options();
    o.maxRate = 1000.0;
    FlowPacer pacer(o, clock.function());
    pacer.start();
    CHECK(pacer.connectionWindow() == 64 * 1024);
}

TEST_CASE("the pacer shares what the rate allows round robin, so no stream starves") {
    FakeClock clock;
    auto o = options();
    o.maxRate = 10e6;
    FlowPacer pacer(o, clock.function());
    pacer.start();
    clock.now += 10ms; // 100 kB of tokens
    CHECK(pacer.share({80'000, 80'000}) == std::vector<std::size_t>{80'000, 20'000});
    clock.now += 10ms;
    CHECK(pacer.share({60'000, 80'000}) == std::vector<std::size_t>{20'000, 80'000});
    CHECK(pacer.share({0, 0}) == std::vector<std::size_t>{0, 0});
    CHECK(pacer.share({}).empty());
}

TEST_CASE("the nice mode is asked at start and at each sample, windows follow rate and the smallest RTT") {
    FakeClock clock;
    FixedRate nice;
    nice.rate = 10e6;
    auto o = options();
    o.rateController = &nice;
    FlowPacer pacer(o, clock.function());
    pacer.start();
    REQUIRE(nice.samples.size() == 1);
    CHECK(pacer.rateLimit() == 10e6);
    CHECK(pacer.connectionWindow() == 250'000);

    CHECK_FALSE(pacer.sampleDue());
    clock.now += o.sampleInterval;
    CHECK(pacer.sampleDue());
    pacer.received(4096);
    pacer.onRtt(100ms);
    CHECK(pacer.sample()); // windows of 10 MB/s x 2 x 100 ms
    CHECK(pacer.connectionWindow() == 2'000'000);
    REQUIRE(nice.samples.size() == 2);
    CHECK(nice.samples[1].rtt == std::chrono::nanoseconds(100ms));
    CHECK(nice.samples[1].receivedBytes == 4096);
    CHECK(nice.samples[1].time == clock.now);
    CHECK_FALSE(nice.samples[1].interfaceRxBytes);

    // A larger RTT (a queue we built) does not grow them; the RTT goes to the controller only once.
    pacer.onRtt(300ms);
    clock.now += o.sampleInterval;
    CHECK_FALSE(pacer.sample());
    CHECK(pacer.connectionWindow() == 2'000'000);
    clock.now += o.sampleInterval;
    pacer.sample();
    CHECK_FALSE(nice.samples.back().rtt);

    // A change within the hysteresis leaves the windows alone; the end of the limit restores them.
    nice.rate = 11e6;
    clock.now += o.sampleInterval;
    CHECK_FALSE(pacer.sample());
    CHECK(pacer.connectionWindow() == 2'000'000);
    nice.rate.reset();
    clock.now += o.sampleInterval;
    CHECK(pacer.sample());
    CHECK_FALSE(pacer.windowsShrunk());
    CHECK_FALSE(pacer.rateLimit());
}

TEST_CASE("the current rate is what arrived over the last second") {
    FakeClock clock;
    FlowPacer pacer(options(), clock.function());
    pacer.start();
    for (int i = 0; i < 20; ++i) {
        clock.now += 100ms;
        pacer.received(1000);
        pacer.sample();
    }
    CHECK(pacer.receivedBytes() == 20'000);
    CHECK(pacer.currentRate() == Approx(10'000.0));
    clock.now += 100ms;
    pacer.sample(); // nothing arrived for 100 ms
    CHECK(pacer.currentRate() == Approx(9'000.0));
}
