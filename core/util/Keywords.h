#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace nicer {

/// An enum's keyword, from its table of keywords in the enum's order (api::kDownloadStateKeywords,
/// workhost::kVerbKeywords, ...).
template <typename Enum, std::size_t N>
constexpr std::string_view keywordIn(const std::array<std::string_view, N>& keywords, Enum value) {
    return keywords[static_cast<std::size_t>(value)];
}

/// The enum value whose keyword in @p keywords is @p keyword; nullopt for an unknown one (a newer peer's).
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

} // namespace nicer
