#include "net/fetch/DownloadOrder.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

using namespace nicer::net;

namespace {

using Indices = std::vector<std::size_t>;
constexpr auto kUnknown = std::nullopt;

} // namespace

TEST_CASE("parseDownloadOrder reads both orders in any case and round-trips toString", "[DownloadOrder]") {
    CHECK(parseDownloadOrder("srpt").value() == DownloadOrder::Srpt);
    CHECK(parseDownloadOrder("fifo").value() == DownloadOrder::Fifo);
    CHECK(parseDownloadOrder("SRPT").value() == DownloadOrder::Srpt);
    CHECK(parseDownloadOrder("Fifo").value() == DownloadOrder::Fifo);
    for (const auto order : {DownloadOrder::Srpt, DownloadOrder::Fifo}) {
        CHECK(parseDownloadOrder(toString(order)).value() == order);
    }
    CHECK(toString(DownloadOrder::Srpt) == "srpt");
    CHECK(toString(DownloadOrder::Fifo) == "fifo");
}

TEST_CASE("parseDownloadOrder names the bad value and lists the choices", "[DownloadOrder]") {
    const auto text = GENERATE(as<std::string>{}, "", "lifo", "sjf", "srpt ", "fifo,srpt", "s");
    const auto order = parseDownloadOrder(text);
    INFO("'" << text << "'");
    REQUIRE_FALSE(order.ok());
    CHECK_THAT(order.error().message,
               Catch::Contains("'" + text + "'") && Catch::Contains("'srpt'") && Catch::Contains("'fifo'"));
}

TEST_CASE("pickNext in SRPT order starts the smallest remaining downloads first", "[DownloadOrder]") {
    const std::vector<PendingDownload> pending = {{0, 500}, {1, 100}, {2, 300}, {3, 200}};
    CHECK(pickNext(pending, 4, DownloadOrder::Srpt) == Indices{1, 3, 2, 0});
    CHECK(pickNext(pending, 2, DownloadOrder::Srpt) == Indices{1, 3});
    CHECK(pickNext(pending, 1, DownloadOrder::Srpt) == Indices{1});
}

TEST_CASE("pickNext in SRPT order puts unknown sizes last, in manifest order", "[DownloadOrder]") {
    const std::vector<PendingDownload> pending = {
        {0, kUnknown}, {1, 1'000'000'000'000}, {2, kUnknown}, {3, 0}};
    CHECK(pickNext(pending, 4, DownloadOrder::Srpt) == Indices{3, 1, 0, 2});
    CHECK(pickNext(pending, 3, DownloadOrder::Srpt) == Indices{3, 1, 0});

    const std::vector<PendingDownload> allUnknown = {{4, kUnknown}, {2, kUnknown}, {7, kUnknown}};
    CHECK(pickNext(allUnknown, 3, DownloadOrder::Srpt) == Indices{2, 4, 7});
}

TEST_CASE("pickNext breaks SRPT ties by manifest index, not by position in the list", "[DownloadOrder]") {
    const std::vector<PendingDownload> pending = {{5, 100}, {2, 100}, {9, 50}, {0, 100}};
    CHECK(pickNext(pending, 4, DownloadOrder::Srpt) == Indices{9, 0, 2, 5});
    CHECK(pickNext(pending, 2, DownloadOrder::Srpt) == Indices{9, 0});
}

TEST_CASE("pickNext in FIFO order follows the manifest whatever the sizes", "[DownloadOrder]") {
    const std::vector<PendingDownload> pending = {{3, 10}, {1, kUnknown}, {2, 999}, {0, 5}};
    CHECK(pickNext(pending, 4, DownloadOrder::Fifo) == Indices{0, 1, 2, 3});
    CHECK(pickNext(pending, 2, DownloadOrder::Fifo) == Indices{0, 1});
}

TEST_CASE("pickNext hands out no more than the free slots or the pending downloads", "[DownloadOrder]") {
    const std::vector<PendingDownload> pending = {{0, 3}, {1, 2}};
    for (const auto order : {DownloadOrder::Srpt, DownloadOrder::Fifo}) {
        CHECK(pickNext(pending, 0, order).empty());
        CHECK(pickNext(pending, 10, order).size() == 2);
        CHECK(pickNext({}, 5, order).empty());
    }
}

TEST_CASE("pickNext in SRPT order agrees with a full sort on random inputs", "[DownloadOrder]") {
    std::mt19937 random(12345);
    for (int round = 0; round < 200; ++round) {
        const auto count = std::uniform_int_distribution<std::size_t>(0, 30)(random);
        std::vector<PendingDownload> pending;
        for (std::size_t i = 0; i < count; ++i) {
            PendingDownload p{i * 3 + 1, std::nullopt};
            if (std::uniform_int_distribution<int>(0, 4)(random) != 0) {
                p.remaining = std::uniform_int_distribution<std::uint64_t>(0, 20)(random); // many ties
            }
            pending.push_back(p);
        }
        std::shuffle(pending.begin(), pending.end(), random);
        const auto slots = std::uniform_int_distribution<std::size_t>(0, 35)(random);

        const auto picked = pickNext(pending, slots, DownloadOrder::Srpt);
        REQUIRE(picked.size() == std::min(slots, count));
        // Each pick is the best of what is left: known before unknown, then smaller, then lower index.
        auto rest = pending;
        for (const auto index : picked) {
            const auto best = std::min_element(rest.begin(), rest.end(), [](const auto& a, const auto& b) {
                if (a.remaining.has_value() != b.remaining.has_value()) {
                    return a.remaining.has_value();
                }
                if (a.remaining != b.remaining) {
                    return a.remaining < b.remaining;
                }
                return a.index < b.index;
            });
            REQUIRE(best->index == index);
            rest.erase(best);
        }
    }
}
