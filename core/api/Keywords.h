#pragma once

#include "util/Keywords.h"

#include <optional>
#include <string_view>
#include <type_traits>

namespace nicer::api {

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

/// The value @p keyword stands for; nullopt for one this side does not know.
template <KeywordEnum Enum>
constexpr std::optional<Enum> busKeywordValue(std::string_view keyword) {
    return valueIn<Enum>(BusKeywords<Enum>::keywords, keyword);
}

/// The value a keyword read from the bus stands for; BusKeywords' unknown for one this side does not know.
template <KeywordEnum Enum>
constexpr Enum fromBusKeyword(std::string_view keyword) {
    return valueIn<Enum>(BusKeywords<Enum>::keywords, keyword).value_or(BusKeywords<Enum>::unknown);
}

} // namespace nicer::api
