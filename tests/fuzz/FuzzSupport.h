#pragma once

// What the fuzz targets share: the input as text, and a check that aborts with a message libFuzzer reports as
// a crash (and saves the input for), unlike assert() it does not vanish with NDEBUG.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace nicer::fuzz {

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void fail(const char* condition, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, condition);
    std::abort();
}

} // namespace nicer::fuzz

/// An invariant of the code under test: a false one is a finding.
#define FUZZ_CHECK(condition)                                                                                \
    do {                                                                                                     \
        if (!(condition)) {                                                                                  \
            ::nicer::fuzz::fail(#condition, __FILE__, __LINE__);                                             \
        }                                                                                                    \
    } while (false)
