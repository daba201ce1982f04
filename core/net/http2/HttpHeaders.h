#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nicer::net {

/// The byte range a 206 response carries (Content-Range: bytes first-last/total).
struct ContentRange {
    std::uint64_t first = 0;
    std::uint64_t last = 0;             ///< inclusive
    std::optional<std::uint64_t> total; ///< nullopt for "/*": the server does not know the length

    bool operator==(const ContentRange&) const = default;
};

/// Parses "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/*"; nullopt unless first <= last < total. The
/// unsatisfied form "bytes */TOTAL" (sent with 416) gives nullopt too.
std::optional<ContentRange> parseContentRange(std::string_view value);

/// Parses a Content-Length: decimal digits only, nullopt on anything else or on overflow. A list of equal
/// values ("42, 42", from a proxy folding repeated headers) is the single value, as RFC 9110 allows.
std::optional<std::uint64_t> parseContentLength(std::string_view value);

/// How long a Retry-After asks to wait from @p now: delta-seconds or an HTTP-date (IMF-fixdate, or the
/// obsolete RFC 850 and asctime forms that RFC 9110 requires recipients to accept). A date in the past
/// gives 0s; huge values saturate. The caller bounds the wait. nullopt when the value is neither form.
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now);

} // namespace nicer::net
