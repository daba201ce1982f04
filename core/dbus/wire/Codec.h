#pragma once

#include "api/Boinc.h"
#include "api/DaemonProperties.h"
#include "api/DaemonState.h"
#include "api/DownloadEntry.h"
#include "api/PresetInfo.h"
#include "api/Sample.h"
#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "dbus/wire/ParameterArguments.h"
#include "libsystemd/Bus.h"
#include "libsystemd/Message.h"

#include <string>
#include <vector>

/// The one typed encoder and decoder of nicerd's D-Bus types over sd_bus_message, shared by DaemonService
/// and DaemonClient. Every function returns sd-bus's value: negative errno on failure; the readers of one
/// array entry return 0 at the array's end.
namespace nicer::dbus::codec {

/// The fields of a Sample, not in a struct (the Sample signal's arguments).
int appendSampleFields(sd_bus_message* m, const api::Sample& sample);
/// Reads them back: 0, or a negative errno.
int readSampleFields(sd_bus_message* m, api::Sample& sample);

/// One struct of each type.
int append(sd_bus_message* m, const api::Sample& sample);
int append(sd_bus_message* m, const api::DownloadEntry& entry);
int append(sd_bus_message* m, const api::PresetInfo& preset);
int read(sd_bus_message* m, api::Sample& sample);
int read(sd_bus_message* m, api::DownloadEntry& entry);
int read(sd_bus_message* m, api::PresetInfo& preset);
int append(sd_bus_message* m, const api::BoincProject& project);
int append(sd_bus_message* m, const api::BoincTask& task);
int append(sd_bus_message* m, const api::BoincTransfer& transfer);
int append(sd_bus_message* m, const api::BoincNotice& notice);
int read(sd_bus_message* m, api::BoincProject& project);
int read(sd_bus_message* m, api::BoincTask& task);
int read(sd_bus_message* m, api::BoincTransfer& transfer);
int read(sd_bus_message* m, api::BoincNotice& notice);

/// "(tddddddubb)" and so on: the struct's signature (api::structSignature), and "a(...)" for an array.
template <typename T>
std::string structSignature() {
    return std::string("(") + api::structSignature<T>() + ")";
}
template <typename T>
std::string arraySignature() {
    return "a" + structSignature<T>();
}

/// An array of structs.
template <typename T>
int appendArray(sd_bus_message* m, const std::vector<T>& items) {
    libsystemd::MessageWriter out(m);
    out.open('a', structSignature<T>().c_str());
    for (const auto& item : items) {
        out.run([&] { return append(m, item); });
    }
    out.close();
    return out.result();
}

template <typename T>
int readArray(sd_bus_message* m, std::vector<T>& items) {
    libsystemd::MessageReader in(m);
    if (!in.enter('a', structSignature<T>().c_str())) {
        return in.result();
    }
    for (;;) {
        T item;
        if (in.run([&] { return read(m, item); }) <= 0) {
            break;
        }
        items.push_back(std::move(item));
    }
    in.exit();
    return in.result();
}

/// A variant holding an array of structs (a property's value in GetAll).
template <typename T>
int readArrayVariant(sd_bus_message* m, std::vector<T>& items) {
    libsystemd::MessageReader in(m);
    in.enter('v', arraySignature<T>().c_str());
    in.run([&] { return readArray(m, items); });
    in.exit();
    return in.result();
}

/// An array of strings (as); reading it replaces @p values.
int appendStrings(sd_bus_message* m, const std::vector<std::string>& values);
int readStrings(sd_bus_message* m, std::vector<std::string>& values);

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
