#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace nicer::api {

/// An enum's keyword, from its table of keywords in the enum's order (kDownloadStateKeywords, ...).
template <typename Enum, std::size_t N>
constexpr std::string_view keywordIn(const std::array<std::string_view, N>& keywords, Enum value) {
    return keywords[static_cast<std::size_t>(value)];
}

/// The enum value whose keyword in @p keywords is @p keyword; nullopt for an unknown one (a newer daemon's).
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> valueIn(const std::array<std::string_view, N>& keywords,
                                      std::string_view keyword) {
    for (std::size_t i = 0; i < N; ++i) {
        if (keywords[i] == keyword) {
            return static_cast<Enum>(i);
        }
    }
    return std::nullopt;
}

/// How an enum travels on the bus: as its keyword. Specialised beside each enum that does, with `keywords`
/// (its table) and `unknown`, the value a client reads for a keyword it does not know (a newer nicerd's).
template <typename Enum>
struct BusKeywords;

template <typename T>
concept KeywordEnum = std::is_enum_v<T> && requires {
    BusKeywords<T>::keywords;
    BusKeywords<T>::unknown;
};

/// The keyword @p value travels as.
template <KeywordEnum Enum>
constexpr std::string_view busKeyword(Enum value) {
    return keywordIn(BusKeywords<Enum>::keywords, value);
}

/// The value a keyword read from the bus stands for; BusKeywords' unknown for one this side does not know.
template <KeywordEnum Enum>
constexpr Enum fromBusKeyword(std::string_view keyword) {
    return valueIn<Enum>(BusKeywords<Enum>::keywords, keyword).value_or(BusKeywords<Enum>::unknown);
}

} // namespace nicer::api
