#pragma once

#include "util/Result.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace nicer::text {

/// The factor of a byte-size unit, 1024-based, in any case: "b" (1); "k", "kb", "ki" or "kib" (1024); and so
/// on with "m", "g", "t", "p" and "e" (1024^6). These are the units CLI11's AsSizeValue took. nullopt for any
/// other text, the empty one among them.
std::optional<std::uint64_t> byteUnitFactor(std::string_view unit);

/// Parses a byte size as people type it: a decimal number (digits with an optional point; no sign, exponent
/// or space) followed by an optional unit of byteUnitFactor(), e.g. "250000", "500k", "1.5M", "10MiB",
/// "64KB". The unit is the letters at the end. The value may be 0 or a fraction of a byte; the caller says
/// what it accepts. The error names the text and the accepted form.
Result<double> parseByteSize(std::string_view text);

} // namespace nicer::text
