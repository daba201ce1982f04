// The response header rules of net/http2/HttpHeaders: Content-Range, Content-Length and Retry-After on any
// value. A range that parses is ordered and inside its total and reads back from its own text; a length reads
// back from its digits; a wait is never negative, and a delta-seconds value is the number it states
// (saturated).

#include "FuzzSupport.h"
#include "net/http2/HttpHeaders.h"

#include <algorithm>
#include <fuzzer/FuzzedDataProvider.h>
#include <limits>
#include <string>

using namespace nicer;
using namespace std::chrono;

namespace {

bool allDigits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view trimmed(std::string_view text) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!text.empty() && blank(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && blank(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    // "now" anywhere from 1970 to 2200, so that two-digit years and dates in the past and future are met.
    const auto now =
        system_clock::time_point(seconds(input.ConsumeIntegralInRange<std::int64_t>(0, 7'258'118'400)));
    const std::string value = input.ConsumeRemainingBytesAsString();

    if (const auto range = net::parseContentRange(value)) {
        FUZZ_CHECK(range->first <= range->last);
        FUZZ_CHECK(!range->total || range->last < *range->total);
        const std::string text = "bytes " + std::to_string(range->first) + "-" + std::to_string(range->last) +
                                 "/" + (range->total ? std::to_string(*range->total) : "*");
        FUZZ_CHECK(net::parseContentRange(text) == range);
    }

    if (const auto length = net::parseContentLength(value)) {
        FUZZ_CHECK(net::parseContentLength(std::to_string(*length)) == length);
        FUZZ_CHECK(net::parseContentLength(std::to_string(*length) + ", " + std::to_string(*length)) ==
                   length);
    }

    if (const auto wait = net::parseRetryAfter(value, now)) {
        FUZZ_CHECK(wait->count() >= 0);
        if (allDigits(trimmed(value))) {
            std::uint64_t stated = 0;
            bool overflow = false;
            for (const char c : trimmed(value)) {
                overflow = overflow || stated > (UINT64_MAX - 9) / 10;
                stated = stated * 10 + static_cast<unsigned>(c - '0');
            }
            constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<seconds::rep>::max());
            FUZZ_CHECK(static_cast<std::uint64_t>(wait->count()) ==
                       (overflow || stated > kMax ? kMax : stated));
        }
    } else {
        FUZZ_CHECK(!allDigits(trimmed(value)));
    }
    return 0;
}
