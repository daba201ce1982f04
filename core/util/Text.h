#pragma once

#include <charconv>
#include <span>
#include <string>
#include <string_view>
#include <vector>

/// Small text helpers shared by the core's parsers (/proc, cgroup files, traces, parameter files).
namespace nicer::text {

/// @p v in printf's "%g": the shortest of fixed and exponent form, six significant digits ("0.05", "64",
/// "1e+06"), as errors and --help show numbers.
std::string shortNumber(double v);

/// @p bytes for people: "512 B", "1.5 MiB", "3.9 GiB" (1024-based, one decimal above bytes).
std::string humanBytes(double bytes);

/// @p s without leading and trailing spaces, tabs, CRs and LFs.
std::string_view trim(std::string_view s);

/// The next word of @p rest (separated by spaces, tabs or CRs), which is moved past it; empty at the end.
std::string_view nextToken(std::string_view& rest);

/// The parts of @p s between @p separator, empty ones included ("a,,b" gives three).
std::vector<std::string_view> split(std::string_view s, char separator);

/// @p s with ASCII letters A-Z in lower case and every other byte as it is (no locale: protocol names,
/// header names, hex digits, keywords).
std::string toLowerAscii(std::string_view s);

/// @p bytes as lower-case hex digits, two per byte: digests, passwords, a byte shown as "\\x1b".
std::string lowerHex(std::span<const unsigned char> bytes);

/// Parses all of @p text as a number (no sign for unsigned types, no surrounding space); false when any of it
/// is not part of the number or it does not fit in T.
template <typename T>
bool parseNumber(std::string_view text, T& value) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc{} && ptr == text.data() + text.size();
}

} // namespace nicer::text
