#include "net/rate/NiceRateController.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMbit = 1e6 / 8; // bytes per second

/// What shares the bottleneck with the download.
enum class Foreground {
    None,
    Elastic, ///< a bulk TCP download: takes whatever is left and keeps the bottleneck's buffer full
    Fixed,   ///< a stream at a set rate (a video, a call): never more, never queueing by itself
    /// a bulk TCP download limited by its receive window: takes what is left up to 95% of the link, and
    /// builds no queue, so only the byte counters show it
    WindowLimited,
};

/// A fluid model of a bottleneck link in front of the machine, closed around the controller: each tick the
/// download takes what the controller allows (up to its TCP share), the foreground takes the rest, a queue
/// grows when the two ask for more than the link carries, and the controller is sampled like the fetcher
/// would sample it.
class LinkModel {
public:
    struct Params {
        double capacity = 100 * kMbit; ///< link bytes per second
        double baseRtt = 0.020;        ///< seconds
        double buffer = 0.080;         ///< seconds of queue the bottleneck holds when full
        double overhead = 0.05;        ///< link bytes per payload byte beyond 1
        double tick = 0.1;             ///< seconds between samples
        bool rtt = true;               ///< the fetcher measures PING RTTs
        bool interface = true;         ///< /proc/net/dev is readable
    };

    struct Totals {
        double ourPayload = 0.0; ///< bytes
        double foreground = 0.0; ///< link bytes
        double seconds = 0.0;
        double ourRate() const { return ourPayload / seconds; }
        double foregroundRate() const { return foreground / seconds; }
    };

    explicit LinkModel(Params params, const NiceRateOptions& options = {})
        : m_params(params)
        , m_controller(options) {
        m_allowed = *m_controller.onSample(sample(std::nullopt));
    }

    Totals run(double seconds, Foreground foreground = Foreground::None, double foregroundRate = 0.0) {
        Totals totals;
        const int ticks = static_cast<int>(std::lround(seconds / m_params.tick));
        for (int i = 0; i < ticks; ++i) {
            const double k = m_params.capacity;
            const double dt = m_params.tick;
            const double wanted = m_allowed * (1.0 + m_params.overhead);
            double ours = 0.0;
            double other = 0.0;
            if (foreground == Foreground::Elastic) {
                // Two TCP flows into one full buffer: at most half each; what we leave, the other takes.
                ours = std::min(wanted, k / 2);
                other = k - ours;
                m_queue = k * m_params.buffer;
            } else if (foreground == Foreground::WindowLimited) {
                ours = std::min(wanted, k / 2);
                other = std::min(0.95 * k, k - ours);
                m_queue = 0.0;
            } else {
                other = foreground == Foreground::Fixed ? std::min(foregroundRate, k) : 0.0;
                ours = std::min(wanted, k - other);
                m_queue = std::clamp(m_queue + (wanted + other - k) * dt, 0.0, k * m_params.buffer);
            }
            m_received += ours / (1.0 + m_params.overhead) * dt;
            m_interface += (ours + other) * dt;
            m_time += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(dt));
            totals.ourPayload += ours / (1.0 + m_params.overhead) * dt;
            totals.foreground += other * dt;
            totals.seconds += dt;

            std::optional<std::chrono::nanoseconds> rtt;
            if (m_params.rtt) {
                rtt = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::duration<double>(m_params.baseRtt + m_queue / k + m_extraDelay));
            }
            const auto answer = m_controller.onSample(sample(rtt));
            REQUIRE(answer.has_value());
            REQUIRE(std::isfinite(*answer));
            REQUIRE(*answer >= m_controller.options().minRate);
            m_allowed = *answer;
        }
        return totals;
    }

    /// Delay added on top of the queue, as a bottleneck further away (not on this link) would add.
    void setExtraDelay(double seconds) { m_extraDelay = seconds; }
    double allowed() const { return m_allowed; }
    const NiceRateController& controller() const { return m_controller; }
    const Params& params() const { return m_params; }
    /// Largest payload rate the link can carry.
    double payloadCapacity() const { return m_params.capacity / (1.0 + m_params.overhead); }

private:
    LinkSample sample(std::optional<std::chrono::nanoseconds> rtt) const {
        LinkSample s;
        s.time = m_time;
        s.receivedBytes = static_cast<std::uint64_t>(m_received);
        s.rtt = rtt;
        if (m_params.interface) {
            s.interfaceRxBytes = static_cast<std::uint64_t>(m_interface);
        }
        return s;
    }

    Params m_params;
    NiceRateController m_controller;
    Clock::time_point m_time{std::chrono::hours(1)};
    double m_received = 0.0;
    double m_interface = 1e9; // the machine received something before the download started
    double m_queue = 0.0;
    double m_extraDelay = 0.0;
    double m_allowed = 0.0;
};

LinkModel::Params withoutRtt() {
    LinkModel::Params p;
    p.rtt = false;
    return p;
}

} // namespace

TEST_CASE("the default options are valid and the factory makes a nice controller", "[nicerate]") {
    CHECK(validate(NiceRateOptions{}).ok());
    const auto controller = makeNiceRateController();
    REQUIRE(controller != nullptr);
    LinkSample first;
    first.time = Clock::time_point{1h};
    const auto rate = controller->onSample(first);
    REQUIRE(rate.has_value());
    CHECK(*rate == NiceRateOptions{}.minRate);
}

TEST_CASE("options out of range are rejected with their name and range", "[nicerate]") {
    struct Case {
        NiceRateOptions options;
        const char* expected;
    };
    auto with = [](auto change) {
        NiceRateOptions o;
        change(o);
        return o;
    };
    const auto c = GENERATE_COPY(
        Case{with([](NiceRateOptions& o) { o.minRate = 0; }), "min-rate = 0 is out of range"},
        Case{with([](NiceRateOptions& o) { o.minRate = std::nan(""); }), "min-rate = nan"},
        Case{with([](NiceRateOptions& o) { o.targetDelay = 0ms; }), "target-delay = 0 ms"},
        Case{with([](NiceRateOptions& o) { o.reserve.reserveBand = 0.9; }),
             "reserve controller: reserve-band"},
        Case{with([](NiceRateOptions& o) { o.delayMaxCut = 1.0; }), "delay-max-cut = 1"},
        Case{with([](NiceRateOptions& o) { o.initialCapacity = -1; }), "initial-capacity = -1"},
        Case{with([](NiceRateOptions& o) { o.currentRttSamples = 0; }), "current-rtt-samples = 0"});
    const auto result = validate(c.options);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.error().message, Catch::Contains(c.expected));
}

TEST_CASE("on an idle link the rate grows to the capacity, less the reserve band", "[nicerate]") {
    LinkModel link(LinkModel::Params{});
    link.run(10);
    const auto steady = link.run(20);
    CAPTURE(steady.ourRate() / link.payloadCapacity(), link.controller().status().capacity);
    CHECK(steady.ourRate() >= 0.85 * link.payloadCapacity());
    CHECK(link.controller().status().capacity >= 0.9 * link.params().capacity);
    CHECK(link.controller().status().capacity <= 1.6 * link.params().capacity);
}

TEST_CASE("the start reaches most of a fast link within a few seconds", "[nicerate]") {
    LinkModel::Params p;
    p.capacity = 1000 * kMbit;
    LinkModel link(p);
    link.run(8);
    const auto later = link.run(5);
    CHECK(later.ourRate() >= 0.8 * link.payloadCapacity());
}

TEST_CASE("a slow link is found without flooding it for long", "[nicerate]") {
    LinkModel::Params p;
    p.capacity = 2 * kMbit;
    LinkModel link(p);
    link.run(10);
    // The first guess (2 MiB/s) is far above the link; within a few periods C follows what arrives.
    CHECK(link.controller().status().capacity <= 1.6 * p.capacity);
    const auto steady = link.run(20);
    CHECK(steady.ourRate() >= 0.8 * link.payloadCapacity());
}

TEST_CASE("a rising RTT cuts the rate quickly", "[nicerate]") {
    LinkModel link(LinkModel::Params{});
    link.run(20);
    const double before = link.allowed();
    REQUIRE(before >= 0.8 * link.payloadCapacity());

    link.setExtraDelay(0.100); // a queue elsewhere on the path: the counters cannot see it, the RTT can
    link.run(1.0);             // two controller periods
    CHECK(link.allowed() <= 0.5 * before);
    link.run(2.0);
    CHECK(link.allowed() <= 0.05 * before);
    CHECK(link.controller().status().queueingDelay.value() >= 90ms);
    CHECK(link.controller().status().idleShare == 0.0);

    SECTION("and it grows back once the queue is gone") {
        link.setExtraDelay(0.0);
        link.run(10);
        CHECK(link.allowed() >= 0.8 * link.payloadCapacity());
    }
}

TEST_CASE("our own bytes arriving beyond the allowed rate are not taken for the user's", "[nicerate]") {
    // The fetcher's flow control lags the rate by a window: after a cut, data already granted still
    // arrives. With the delay at its base and nobody else on the link, that must not stop the download.
    NiceRateController controller;
    auto time = Clock::time_point{1h};
    std::uint64_t ours = 0;
    std::uint64_t iface = 0;
    double rate = 0;
    for (int i = 0; i < 100; ++i) {
        time += 100ms;
        ours += 1'200'000; // 12 MB/s whatever the answer
        iface += 1'260'000;
        LinkSample s;
        s.time = time;
        s.receivedBytes = ours;
        s.interfaceRxBytes = iface;
        s.rtt = 20ms;
        rate = *controller.onSample(s);
    }
    CHECK(controller.status().foregroundShare < 0.01);
    CHECK(rate >= 0.8 * 12e6);
}

TEST_CASE("a delay below the target does not slow the download", "[nicerate]") {
    LinkModel link(LinkModel::Params{});
    link.setExtraDelay(0.010);
    link.run(10);
    const auto steady = link.run(20);
    CHECK(steady.ourRate() >= 0.85 * link.payloadCapacity());
}

TEST_CASE("a bulk foreground download makes the nice download yield, and it recovers after", "[nicerate]") {
    const bool rtt = GENERATE(true, false);
    CAPTURE(rtt);
    LinkModel::Params p;
    p.rtt = rtt;
    LinkModel link(p);
    link.run(20);
    REQUIRE(link.allowed() >= 0.8 * link.payloadCapacity());

    const auto arrival = link.run(4, Foreground::Elastic);
    CHECK(link.allowed() <= 2 * link.controller().options().minRate);
    const auto contended = link.run(20, Foreground::Elastic);
    CAPTURE(contended.foregroundRate() / p.capacity, arrival.foregroundRate() / p.capacity);
    // The user's download keeps nearly the whole link (it would get half against a normal download).
    CHECK(contended.foregroundRate() >= 0.98 * p.capacity);
    CHECK(arrival.foregroundRate() >= 0.6 * p.capacity);
    CHECK(link.controller().status().foregroundShare >= 0.9);

    link.run(6);
    const auto after = link.run(10);
    CHECK(after.ourRate() >= 0.8 * link.payloadCapacity());
}

TEST_CASE("a foreground download that builds no queue still gets nearly all of the link", "[nicerate]") {
    LinkModel link(LinkModel::Params{});
    link.run(20);
    link.run(4, Foreground::WindowLimited);
    const auto contended = link.run(20, Foreground::WindowLimited);
    CAPTURE(contended.foregroundRate() / link.params().capacity, link.controller().status().idleShare);
    // Alone it would take 95%; the 5% it leaves must not invite the download back in.
    CHECK(contended.foregroundRate() >= 0.9 * link.params().capacity);
    CHECK_FALSE(link.controller().status().queueingDelay.value() > 1ms);
}

TEST_CASE("a steady foreground stream keeps its share plus headroom and the reserve band", "[nicerate]") {
    const bool rtt = GENERATE(true, false);
    CAPTURE(rtt);
    LinkModel::Params p;
    p.rtt = rtt;
    LinkModel link(p);
    link.run(20);

    const double stream = 0.3 * p.capacity;
    link.run(10, Foreground::Fixed, stream);
    const auto shared = link.run(20, Foreground::Fixed, stream);
    CAPTURE(shared.ourRate() / link.payloadCapacity());
    CHECK(shared.foregroundRate() >= 0.99 * stream); // the stream never starves
    // We fill most of the rest, but leave room for the stream to grow by a quarter, plus one band.
    const double ourLink = shared.ourRate() * (1 + p.overhead);
    CHECK(ourLink >= 0.5 * p.capacity);
    CHECK(ourLink + stream <= (1 - 0.25 * 0.3 - 0.04) * p.capacity);
    CHECK(link.controller().status().foregroundShare == Approx(0.3).margin(0.05));

    link.run(10);
    CHECK(link.allowed() >= 0.8 * link.payloadCapacity());
}

TEST_CASE("without interface counters the RTT alone makes the download yield", "[nicerate]") {
    LinkModel::Params p;
    p.interface = false;
    LinkModel link(p);
    link.run(20);
    CHECK(link.allowed() >= 0.8 * link.payloadCapacity());
    const auto contended = link.run(20, Foreground::Elastic);
    CHECK(contended.foregroundRate() >= 0.9 * p.capacity);
}

TEST_CASE("without RTT samples an idle link is still used fully", "[nicerate]") {
    LinkModel link(withoutRtt());
    link.run(10);
    const auto steady = link.run(20);
    CHECK(steady.ourRate() >= 0.85 * link.payloadCapacity());
    CHECK_FALSE(link.controller().status().queueingDelay.has_value());
}

TEST_CASE("how often the fetcher samples does not change where the controller settles", "[nicerate]") {
    const double tick = GENERATE(0.05, 0.25, 1.0);
    CAPTURE(tick);
    LinkModel::Params p;
    p.tick = tick;
    LinkModel link(p);
    link.run(20);
    const auto steady = link.run(20);
    CHECK(steady.ourRate() >= 0.8 * link.payloadCapacity());
    link.run(6, Foreground::Elastic);
    const auto contended = link.run(20, Foreground::Elastic);
    CHECK(contended.foregroundRate() >= 0.95 * p.capacity);
}

TEST_CASE("counters going backwards or wrapping give no negative or huge rates", "[nicerate]") {
    NiceRateController controller;
    const auto t0 = Clock::time_point{1h};
    auto sampleAt = [&](std::chrono::milliseconds at, std::uint64_t ours,
                        std::optional<std::uint64_t> iface) {
        LinkSample s;
        s.time = t0 + at;
        s.receivedBytes = ours;
        s.interfaceRxBytes = iface;
        s.rtt = 20ms;
        const auto rate = controller.onSample(s);
        REQUIRE(rate.has_value());
        CHECK(std::isfinite(*rate));
        CHECK(*rate >= controller.options().minRate);
        CHECK(controller.status().ourRate >= 0.0);
        CHECK(controller.status().foregroundShare >= 0.0);
        CHECK(std::isfinite(controller.status().capacity));
        return *rate;
    };
    const auto max = std::numeric_limits<std::uint64_t>::max();
    sampleAt(0ms, 1'000'000, 5'000'000);
    sampleAt(500ms, 2'000'000, 6'100'000);
    sampleAt(1000ms, 500, 100);              // both counters went back (a restart, a wrap)
    sampleAt(1500ms, 1'000'500, 1'050'100);  // and move on from there
    sampleAt(2000ms, max, max);              // a jump to the largest counter
    sampleAt(2500ms, 0, 0);                  // and a wrap to zero
    sampleAt(3000ms, 400'000, std::nullopt); // interface counters unreadable for a while
    sampleAt(3500ms, 800'000, 900'000);
    const double steady = sampleAt(4000ms, 1'200'000, 1'350'000);
    sampleAt(4000ms, 1'300'000, 1'450'000);                  // the same time again: ignored
    CHECK(sampleAt(3000ms, 1'400'000, 1'550'000) == steady); // time going back: ignored
    // One bogus jump must not let the capacity estimate run away for the whole window.
    CHECK(controller.status().capacity < 1e12);
}

TEST_CASE("a long gap between samples restarts the measurement instead of reading as idle", "[nicerate]") {
    NiceRateController controller;
    auto time = Clock::time_point{1h};
    std::uint64_t ours = 0;
    std::uint64_t iface = 0;
    auto feed = [&](std::chrono::milliseconds after, std::uint64_t oursAdded, std::uint64_t ifaceAdded) {
        time += after;
        ours += oursAdded;
        iface += ifaceAdded;
        LinkSample s;
        s.time = time;
        s.receivedBytes = ours;
        s.interfaceRxBytes = iface;
        s.rtt = 20ms;
        return *controller.onSample(s);
    };
    // A link full of someone else's traffic: the download holds back.
    feed(0ms, 0, 0);
    double rate = 0;
    for (int i = 0; i < 40; ++i) {
        rate = feed(250ms, 1'000, 3'000'000);
    }
    REQUIRE(rate == controller.options().minRate);
    const int steps = controller.status().steps;
    // Ten minutes without a sample (a suspend): averaging the bytes over them would read as a free link.
    CHECK(feed(10min, 2'000, 3'000'000) == rate);
    CHECK(controller.status().steps == steps);
    CHECK(feed(250ms, 1'000, 3'000'000) == rate);
    CHECK(feed(250ms, 1'000, 3'000'000) == rate);
}

TEST_CASE("arbitrary sample sequences never give NaN, a negative rate or less than the floor", "[nicerate]") {
    std::mt19937_64 rng(20240611);
    std::uniform_int_distribution<int> coin(0, 9);
    std::uniform_int_distribution<std::uint64_t> bytes(0, 50'000'000);
    std::uniform_int_distribution<int> stepMs(-50, 3000);
    std::uniform_int_distribution<int> rttMs(-5, 2000);
    for (int run = 0; run < 50; ++run) {
        NiceRateOptions options;
        options.minRate = 1000.0 * (1 + run);
        NiceRateController controller(options);
        auto time = Clock::time_point{1h};
        std::uint64_t ours = 0;
        std::uint64_t iface = 0;
        for (int i = 0; i < 400; ++i) {
            time += std::chrono::milliseconds(stepMs(rng));
            ours = coin(rng) == 0 ? bytes(rng) : ours + bytes(rng) / 10;
            iface = coin(rng) == 0 ? bytes(rng) : iface + bytes(rng) / 5;
            LinkSample s;
            s.time = time;
            s.receivedBytes = ours;
            if (coin(rng) != 0) {
                s.interfaceRxBytes = iface;
            }
            if (coin(rng) < 5) {
                s.rtt = std::chrono::milliseconds(rttMs(rng));
            }
            const auto rate = controller.onSample(s);
            REQUIRE(rate.has_value());
            REQUIRE(std::isfinite(*rate));
            REQUIRE(*rate >= options.minRate);
            REQUIRE(controller.status().reserve.quota >= 0.0);
            REQUIRE(controller.status().reserve.quota <= 1.0);
        }
    }
}

TEST_CASE("the same samples always give the same rates", "[nicerate]") {
    auto trace = [] {
        LinkModel link(LinkModel::Params{});
        std::vector<double> rates;
        for (int i = 0; i < 30; ++i) {
            link.run(1, i % 10 < 4 ? Foreground::Elastic : Foreground::None);
            rates.push_back(link.allowed());
        }
        return rates;
    };
    CHECK(trace() == trace());
}

TEST_CASE("with yieldAtOnce the first period that sees the user's traffic leaves it its room", "[nicerate]") {
    // A stream of 40% of the link appears. The reserve controller alone takes several periods to integrate
    // down from its idle-link quota; yieldAtOnce caps the rate at once at what the stream leaves, less its
    // headroom and the band: 1 - 1.25 x 0.4 - 0.05 = 0.45 of the link. No RTT, so only the counters decide.
    const auto afterOnePeriod = [](bool yieldAtOnce) {
        NiceRateOptions options;
        options.yieldAtOnce = yieldAtOnce;
        LinkModel link(withoutRtt(), options);
        link.run(30);
        link.run(0.5, Foreground::Fixed, 0.4 * link.params().capacity);
        return link.allowed() / link.payloadCapacity();
    };
    CHECK(afterOnePeriod(true) <= 0.46);
    CHECK(afterOnePeriod(false) > 0.6);
}
