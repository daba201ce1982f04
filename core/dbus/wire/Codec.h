#pragma once

#include "api/BusStruct.h"
#include "api/DaemonProperties.h"
#include "api/DaemonState.h"
#include "api/Keywords.h"
#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "dbus/wire/ParameterArguments.h"
#include "libsystemd/Bus.h"
#include "libsystemd/Message.h"

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/// The one typed encoder and decoder of nicerd's D-Bus types over sd_bus_message, shared by DaemonService
/// and DaemonClient. Every function returns sd-bus's value: negative errno on failure; the readers return 0
/// at the end of the container they read from (an array's last entry was read), else a positive value.
namespace nicer::dbus::codec {

// One value of each type a property or a bus struct's field can have, in its signature (api::busSignature).
int appendValue(sd_bus_message* m, bool value);
int appendValue(sd_bus_message* m, std::uint32_t value);
int appendValue(sd_bus_message* m, std::uint64_t value);
int appendValue(sd_bus_message* m, std::int64_t value);
int appendValue(sd_bus_message* m, double value);
int appendValue(sd_bus_message* m, const std::string& value);
/// x: the value, or -1 for none.
int appendValue(sd_bus_message* m, const std::optional<std::int64_t>& value);
int readValue(sd_bus_message* m, bool& value);
int readValue(sd_bus_message* m, std::uint32_t& value);
int readValue(sd_bus_message* m, std::uint64_t& value);
int readValue(sd_bus_message* m, std::int64_t& value);
int readValue(sd_bus_message* m, double& value);
int readValue(sd_bus_message* m, std::string& value);
/// A negative value reads as none.
int readValue(sd_bus_message* m, std::optional<std::int64_t>& value);

/// An enum travels as its keyword; one the client does not know reads as api::BusKeywords' unknown.
template <api::KeywordEnum Enum>
int appendValue(sd_bus_message* m, Enum value);
template <api::KeywordEnum Enum>
int readValue(sd_bus_message* m, Enum& value);

/// An array; reading it replaces @p values.
template <typename T>
int appendValue(sd_bus_message* m, const std::vector<T>& values);
template <typename T>
int readValue(sd_bus_message* m, std::vector<T>& values);

/// A bus struct, field by field as its kBusFields lists them.
template <api::BusStruct Struct>
int appendValue(sd_bus_message* m, const Struct& value);
template <api::BusStruct Struct>
int readValue(sd_bus_message* m, Struct& value);

/// A bus struct's fields, not in a struct (the Sample signal's arguments).
template <api::BusStruct Struct>
int appendFields(sd_bus_message* m, const Struct& value) {
    libsystemd::MessageWriter out(m);
    api::forEachField<Struct>(
        [&](const auto& field) { out.run([&] { return appendValue(m, value.*field.member); }); });
    return out.result();
}

/// Reads them back: 0, or a negative errno (-ENXIO when the message ends before the last field).
template <api::BusStruct Struct>
int readFields(sd_bus_message* m, Struct& value) {
    libsystemd::MessageReader in(m);
    api::forEachField<Struct>([&](const auto& field) {
        in.run([&] {
            const int r = readValue(m, value.*field.member);
            return r == 0 ? -ENXIO : r;
        });
    });
    return in.result();
}

template <api::KeywordEnum Enum>
int appendValue(sd_bus_message* m, Enum value) {
    return appendValue(m, std::string(api::busKeyword(value)));
}

template <api::KeywordEnum Enum>
int readValue(sd_bus_message* m, Enum& value) {
    std::string keyword;
    const int r = readValue(m, keyword);
    if (r > 0) {
        value = api::fromBusKeyword<Enum>(keyword);
    }
    return r;
}

template <typename T>
int appendValue(sd_bus_message* m, const std::vector<T>& values) {
    libsystemd::MessageWriter out(m);
    out.open('a', api::busSignature<T>().data());
    for (const auto& value : values) {
        out.run([&] { return appendValue(m, value); });
    }
    out.close();
    return out.ok() ? 1 : out.result();
}

template <typename T>
int readValue(sd_bus_message* m, std::vector<T>& values) {
    values.clear();
    libsystemd::MessageReader in(m);
    if (!in.enter('a', api::busSignature<T>().data())) {
        return in.result();
    }
    for (;;) {
        T value;
        if (in.run([&] { return readValue(m, value); }) <= 0) {
            break;
        }
        values.push_back(std::move(value));
    }
    in.exit();
    return in.ok() ? 1 : in.result();
}

template <api::BusStruct Struct>
int appendValue(sd_bus_message* m, const Struct& value) {
    libsystemd::MessageWriter out(m);
    out.open('r', api::kFieldsSignature<Struct>.data());
    out.run([&] { return appendFields(m, value); });
    out.close();
    return out.ok() ? 1 : out.result();
}

template <api::BusStruct Struct>
int readValue(sd_bus_message* m, Struct& value) {
    libsystemd::MessageReader in(m);
    if (!in.enter('r', api::kFieldsSignature<Struct>.data())) {
        return in.result();
    }
    in.run([&] { return readFields(m, value); });
    in.exit();
    return in.ok() ? 1 : in.result();
}

/// One property's value in @p state, not in a variant (a property getter's reply), by its signature.
int appendProperty(sd_bus_message* m, const api::PropertyInfo& property, const api::DaemonState& state);
/// A variant holding one property's value (an entry of GetAll's reply), read into @p state. A variant of
/// another signature than the table's (a nicerd of another version) is skipped: the field keeps its value.
int readPropertyVariant(sd_bus_message* m, const api::PropertyInfo& property, api::DaemonState& state);

/// One parameter's value in its D-Bus type (info.busSignature, scaled by info.busScale), not in a variant.
int appendParameter(sd_bus_message* m, const control::ParameterInfo& info,
                    const control::ControllerParams& p);
/// A variant holding one parameter, read into @p p. A value of the wrong type or that cannot be stored
/// (a period of a fraction of a millisecond) sets @p error and returns -EINVAL.
int readParameterVariant(sd_bus_message* m, const control::ParameterInfo& info, control::ControllerParams& p,
                         std::string& error);
/// SetParameters' a{sv}, each entry as it is (ParameterArguments.h checks them): a variant of another type
/// than d, u or t is skipped and kept as its signature.
int readParameterArguments(sd_bus_message* m, std::vector<ParameterArgument>& arguments);
/// Every parameter as SetParameters takes them: a{sv} keyed by the D-Bus names.
int appendParameters(sd_bus_message* m, const control::ControllerParams& p);

} // namespace nicer::dbus::codec
