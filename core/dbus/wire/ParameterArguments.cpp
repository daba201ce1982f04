#include "dbus/wire/ParameterArguments.h"

#include <climits>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace nicer::dbus {

namespace {

/// The value a variant held, or nullopt when it held a type no parameter has.
std::optional<BusValue> valueOf(const ParameterArgument& argument) {
    return std::visit(
        [](const auto& held) -> std::optional<BusValue> {
            if constexpr (std::is_same_v<std::decay_t<decltype(held)>, OtherType>) {
                return std::nullopt;
            } else {
                return held;
            }
        },
        argument.value);
}

/// The D-Bus type of what a variant held, as in a signature.
std::string signatureOf(const ParameterArgument& argument) {
    if (const auto* other = std::get_if<OtherType>(&argument.value)) {
        return other->signature;
    }
    // The parameters' signatures in the order of the variant's alternatives.
    static constexpr const char* kSignatures[] = {"d", "u", "t", "s"};
    return kSignatures[argument.value.index()];
}

} // namespace

Result<void> setParameterFromBus(const control::ParameterInfo& info, BusValue value,
                                 control::ControllerParams& p) {
    if (const auto* text = std::get_if<std::string>(&value)) {
        return info.setText(p, *text);
    }
    double v = 0;
    if (const auto* u = std::get_if<std::uint32_t>(&value)) {
        if (*u > static_cast<std::uint32_t>(INT32_MAX)) {
            return Error{std::string(info.busName) + " = " + std::to_string(*u) + " is out of range",
                         ErrorKind::InvalidInput};
        }
        v = *u;
    } else if (const auto* t = std::get_if<std::uint64_t>(&value)) {
        // The period is kept in whole milliseconds.
        if (*t % 1000 != 0) {
            return Error{std::string(info.busName) + " must be whole milliseconds", ErrorKind::InvalidInput};
        }
        v = static_cast<double>(*t);
    } else {
        v = std::get<double>(value);
    }
    return info.set(p, v / info.busScale);
}

Result<control::ControllerParams> applyParameterArguments(control::ControllerParams current,
                                                          std::span<const ParameterArgument> arguments) {
    for (const ParameterArgument& argument : arguments) {
        const control::ParameterInfo* info = control::findBusParameter(argument.key);
        if (!info) {
            return Error{"unknown parameter '" + argument.key + "': the parameters are " +
                             control::parameterNameList(true),
                         ErrorKind::InvalidInput};
        }
        if (signatureOf(argument) != info->busSignature) {
            return Error{std::string("parameter ") + info->busName + " has the wrong type: it must be " +
                             info->busSignature,
                         ErrorKind::InvalidInput};
        }
        if (auto set = setParameterFromBus(*info, *valueOf(argument), current); !set) {
            return set.error();
        }
    }
    // All or nothing: nothing changes unless every value is valid together.
    if (auto valid = control::validate(current); !valid) {
        return valid.error();
    }
    return current;
}

} // namespace nicer::dbus
