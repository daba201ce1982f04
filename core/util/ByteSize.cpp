#include "util/ByteSize.h"

#include "util/Text.h"

#include <array>
#include <charconv>
#include <string>

namespace nicer::text {

std::optional<std::uint64_t> byteUnitFactor(std::string_view unit) {
    const std::string lower = toLowerAscii(unit);
    if (lower == "b") {
        return 1;
    }
    constexpr std::array<char, 6> kPrefixes = {'k', 'm', 'g', 't', 'p', 'e'};
    std::uint64_t factor = 1;
    for (const char prefix : kPrefixes) {
        factor *= 1024;
        const std::string p(1, prefix);
        if (lower == p || lower == p + "b" || lower == p + "i" || lower == p + "ib") {
            return factor;
        }
    }
    return std::nullopt;
}

Result<double> parseByteSize(std::string_view text) {
    const auto bad = [&] {
        return Error{"'" + std::string(text) +
                     "' is not a size in bytes: give a number with an optional suffix k, M, G, T, P or E "
                     "(1024-based, optionally followed by B, i or iB), e.g. 500k or 1.5M"};
    };
    constexpr std::string_view kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const auto unitStart = text.find_last_not_of(kLetters) + 1; // 0 when it is all letters
    const std::string_view number = text.substr(0, unitStart);
    const std::string_view unit = text.substr(unitStart);

    double parsed = 0.0;
    // from_chars, fixed: independent of the locale's decimal separator, and no exponent or hex.
    if (number.empty() || number.front() == '-') {
        return bad();
    }
    if (const auto [end, ec] =
            std::from_chars(number.data(), number.data() + number.size(), parsed, std::chars_format::fixed);
        ec != std::errc{} || end != number.data() + number.size()) {
        return bad();
    }
    std::uint64_t factor = 1;
    if (!unit.empty()) {
        const auto known = byteUnitFactor(unit);
        if (!known) {
            return bad();
        }
        factor = *known;
    }
    return parsed * static_cast<double>(factor);
}

} // namespace nicer::text
