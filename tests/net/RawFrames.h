#pragma once

// HTTP/2 frames written by hand, for servers that break the rules no well-behaved nghttp2 server can be made
// to break: the raw server of the session tests and MisbehavingH2Server::Behaviour::raw.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nicer::net::test {

/// A frame (RFC 9113 section 4.1): type and flags as in nghttp2.h (NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM...).
inline std::string rawFrame(std::uint8_t type, std::uint8_t flags, std::int32_t stream,
                            std::string_view payload) {
    const std::size_t n = payload.size();
    std::string frame{static_cast<char>(n >> 16),
                      static_cast<char>(n >> 8),
                      static_cast<char>(n),
                      static_cast<char>(type),
                      static_cast<char>(flags),
                      static_cast<char>((stream >> 24) & 0x7f),
                      static_cast<char>(stream >> 16),
                      static_cast<char>(stream >> 8),
                      static_cast<char>(stream)};
    frame += payload;
    return frame;
}

inline std::string u32(std::uint32_t value) {
    return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
            static_cast<char>(value)};
}

inline std::uint32_t readU32(std::string_view bytes) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        value = (value << 8) | static_cast<std::uint8_t>(bytes[i]);
    }
    return value;
}

inline std::string repeat(std::string_view unit, std::size_t times) {
    std::string out;
    out.reserve(unit.size() * times);
    for (std::size_t i = 0; i < times; ++i) {
        out += unit;
    }
    return out;
}

/// An HPACK integer (RFC 7541 section 5.1) with a @p prefixBits prefix in @p first's low bits.
inline std::string hpackInt(std::uint8_t first, int prefixBits, std::size_t value) {
    const std::size_t max = (std::size_t{1} << prefixBits) - 1;
    if (value < max) {
        return std::string(1, static_cast<char>(first | value));
    }
    std::string out(1, static_cast<char>(first | max));
    value -= max;
    while (value >= 128) {
        out += static_cast<char>(0x80 | (value & 0x7f));
        value >>= 7;
    }
    out += static_cast<char>(value);
    return out;
}

inline std::string hpackString(std::string_view text) {
    return hpackInt(0, 7, text.size()) + std::string(text);
}

/// A literal field without indexing and with a new name: it leaves the dynamic table alone, so hand-written
/// header blocks never put the client's decoder out of step with a real encoder on the same connection.
inline std::string literal(std::string_view name, std::string_view value) {
    return hpackInt(0, 4, 0) + hpackString(name) + hpackString(value);
}

/// ":status" (static index 8) with a literal value, for values the static table has no entry for.
inline std::string statusLiteral(std::string_view value) {
    return hpackInt(0, 4, 8) + hpackString(value);
}

/// Indexed field 8 of the static table, ":status: 200".
inline const std::string kStatus200 = "\x88";

} // namespace nicer::net::test
