#pragma once

// SetParameters' arguments checked without sd-bus: Codec reads them off the message, DaemonService applies
// them; the rules in between are here, pure, so that they can be tested and fuzzed alone.

#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "util/Result.h"

#include <cstdint>
#include <span>
#include <string>
#include <variant>

namespace nicer::dbus {

/// A parameter's value as D-Bus carries it: "d", "u", "t", or "s" for hours of the week
/// (control::ParameterInfo::busSignature).
using BusValue = std::variant<double, std::uint32_t, std::uint64_t, std::string>;

/// A variant of a type no parameter has, by its signature ("ai", "b", ...).
struct OtherType {
    std::string signature;
};

/// One entry of SetParameters' a{sv} as it came off the bus: the key, and what its variant held, a value of
/// one of the parameters' D-Bus types or, for any other type, its signature.
struct ParameterArgument {
    std::string key;
    std::variant<double, std::uint32_t, std::uint64_t, std::string, OtherType> value;
};

/// Stores @p value, carried in @p info's D-Bus type, into @p p in the text unit (busScale). Refuses a "u"
/// above INT32_MAX, a "t" (µs) that is not whole milliseconds and what info.set or info.setText refuses; the
/// range is left to control::validate(). The error names the parameter.
Result<void> setParameterFromBus(const control::ParameterInfo& info, BusValue value,
                                 control::ControllerParams& p);

/// What SetParameters does with its arguments: each entry names a parameter by its D-Bus name and holds a
/// value of its D-Bus type; they apply over @p current in order, and the result must validate as a whole
/// (all or nothing). The error is the caller's fault (D-Bus InvalidArgs) and says what was wrong.
Result<control::ControllerParams> applyParameterArguments(control::ControllerParams current,
                                                          std::span<const ParameterArgument> arguments);

} // namespace nicer::dbus
