#pragma once

// The bus's structs as a schema: each struct of api/ lists its fields once, in their order on the wire
// (`static constexpr auto kBusFields = std::tuple{busField("name", &Struct::member), ...}`), and everything
// else follows from that list: the D-Bus signature at compile time (below), the sd-bus codec
// (dbus/wire/Codec.h) and the tray's QDBusArgument operators (app/tray/BusTypes.h), which loop over it, and
// the test that walks resources/org.nicer.Daemon1.xml against it.

#include "api/Keywords.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nicer::api {

/// One field of a bus struct: its name (snake case, as the interface's XML and the JSON name it) and the
/// member that holds it.
template <typename Struct, typename T>
struct BusField {
    using Type = T;
    std::string_view name;
    T Struct::*member;
};

template <typename Struct, typename T>
constexpr BusField<Struct, T> busField(std::string_view name, T Struct::*member) {
    return {name, member};
}

/// A struct that travels on the bus: it lists its fields in kBusFields.
template <typename T>
concept BusStruct = requires {
    std::tuple_size<std::remove_cv_t<decltype(T::kBusFields)>>::value;
};

/// Calls @p visit with each field of @p Struct (a BusField), in the wire's order.
template <BusStruct Struct, typename Visit>
constexpr void forEachField(Visit&& visit) {
    std::apply([&](const auto&... field) { (visit(field), ...); }, Struct::kBusFields);
}

/// A string of @p N characters known at compile time, with its terminating zero: a signature that sd-bus's
/// vtable can point at.
template <std::size_t N>
struct FixedString {
    std::array<char, N + 1> chars{};

    constexpr FixedString() = default;
    constexpr FixedString(const char (&text)[N + 1]) { std::copy_n(text, N + 1, chars.begin()); }

    /// Zero-terminated.
    constexpr const char* data() const { return chars.data(); }
    constexpr std::string_view view() const { return {chars.data(), N}; }
    operator std::string() const { return std::string(view()); }
};

template <std::size_t N>
FixedString(const char (&)[N]) -> FixedString<N - 1>;

template <std::size_t A, std::size_t B>
constexpr FixedString<A + B> operator+(const FixedString<A>& a, const FixedString<B>& b) {
    FixedString<A + B> sum;
    std::copy_n(a.chars.begin(), A, sum.chars.begin());
    std::copy_n(b.chars.begin(), B + 1, sum.chars.begin() + A);
    return sum;
}

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

/**
 * The D-Bus signature of a value of type @p T: bool b, std::uint32_t u, std::uint64_t t, std::int64_t x,
 * double d, std::string s, an enum with keywords (KeywordEnum) s, its keyword; std::optional<std::int64_t>
 * x, -1 for none; std::vector<T> "a" and T's, a bus struct "(...)" of its fields'.
 */
template <typename T>
constexpr auto busSignature() {
    if constexpr (std::is_same_v<T, bool>) {
        return FixedString("b");
    } else if constexpr (std::is_same_v<T, std::uint32_t>) {
        return FixedString("u");
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
        return FixedString("t");
    } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::optional<std::int64_t>>) {
        return FixedString("x");
    } else if constexpr (std::is_same_v<T, double>) {
        return FixedString("d");
    } else if constexpr (std::is_same_v<T, std::string> || KeywordEnum<T>) {
        return FixedString("s");
    } else if constexpr (IsVector<T>::value) {
        return FixedString("a") + busSignature<typename T::value_type>();
    } else {
        static_assert(BusStruct<T>, "a type with no D-Bus signature: add it here and to both converters");
        return std::apply(
            [](const auto&... field) {
                return (FixedString("(") + ... +
                        busSignature<typename std::decay_t<decltype(field)>::Type>()) +
                       FixedString(")");
            },
            T::kBusFields);
    }
}

/// "tddddddubbds": the signature of a bus struct's fields, in order, without the parentheses (the Sample
/// signal's arguments).
template <BusStruct Struct>
inline constexpr auto kFieldsSignature = std::apply(
    [](const auto&... field) {
        return (FixedString("") + ... + busSignature<typename std::decay_t<decltype(field)>::Type>());
    },
    Struct::kBusFields);

/// "(sssb)": the struct's signature.
template <BusStruct Struct>
inline constexpr auto kStructSignature = busSignature<Struct>();

/// "a(sssb)": an array of the struct (a property's value, GetHistory's answer).
template <BusStruct Struct>
inline constexpr auto kArraySignature = busSignature<std::vector<Struct>>();

} // namespace nicer::api
