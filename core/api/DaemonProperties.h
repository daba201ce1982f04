#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "control/ParameterTable.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace nicer::api {

/// How a property's changes reach clients.
enum class Announce {
    Never,     ///< constant while nicerd runs (the vtable says so: clients read it once)
    OnChange,  ///< PropertiesChanged with the new value, at most once a period and after each command
    PerPeriod, ///< changes every period: the Sample signal carries it (Quota, Idle, ...) or it is read when
               ///< needed (WorkloadPresets: whether a program is installed can change unannounced)
};

/// Where a property's value lives in the DaemonState; one type per D-Bus signature.
template <typename T>
using Field = T& (*)(DaemonState&);

/// A property's value: a field of the state (its type gives the signature, api::busSignature: b, u, t, d, s,
/// as, or an array of one of the bus's structs; an enum with keywords travels as its keyword, s), or a
/// controller parameter (the parameter table converts its unit).
using PropertyField =
    std::variant<Field<bool>, Field<std::uint32_t>, Field<std::uint64_t>, Field<double>, Field<std::string>,
                 Field<BoincState>, Field<Actuator>, Field<Placement>, Field<control::Signal>,
                 Field<control::Presence>, Field<std::vector<std::string>>, Field<std::vector<PresetInfo>>,
                 Field<std::vector<DownloadEntry>>, Field<std::vector<BoincProject>>,
                 Field<std::vector<BoincTask>>, Field<std::vector<BoincTransfer>>,
                 Field<std::vector<BoincNotice>>, const control::ParameterInfo*>;

/// The field's value in @p state (an accessor only selects a member: nothing is written).
template <typename T>
const T& valueOf(Field<T> field, const DaemonState& state) {
    return field(const_cast<DaemonState&>(state));
}

/// One property of org.nicer.Daemon1.
struct PropertyInfo {
    const char* name; ///< "Paused"
    Announce announce;
    PropertyField field;
};

/**
 * Every property of nicerd's interface, once: the parameters first (from control::parameterTable()), then
 * the state's. The D-Bus service's vtable, getters and PropertiesChanged, the CLI's client and the tray's
 * reader all loop over this table; resources/org.nicer.Daemon1.xml documents the same properties (a test
 * holds them together). Adding a read-only property is a field in DaemonState, a row here and the line of
 * the daemon that fills it.
 */
std::span<const PropertyInfo> daemonProperties();

/// The property called @p name, or null.
const PropertyInfo* findProperty(std::string_view name);

/// The D-Bus signature of the property's value: "b", "as", "a(sssb)", ...
std::string signatureOf(const PropertyInfo& property);

/// Whether @p a and @p b hold the same value of @p property.
bool sameValue(const PropertyInfo& property, const DaemonState& a, const DaemonState& b);

} // namespace nicer::api
