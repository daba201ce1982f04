#pragma once

#include "api/Boinc.h"
#include "api/BusStruct.h"
#include "api/DownloadEntry.h"
#include "api/Keywords.h"
#include "api/PresetInfo.h"
#include "api/Sample.h"

#include <QDBusArgument>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// nicerd's struct types as QtDBus writes and reads them, field by field as their kBusFields list them
// (api/BusStruct.h): the generated proxy (org.nicer.Daemon1.xml, qt_add_dbus_interface) names the lists in
// its QtTypeName annotations.

namespace nicer::tray {

using PresetInfoList = QList<api::PresetInfo>;
using DownloadEntryList = QList<api::DownloadEntry>;
using SampleList = QList<api::Sample>;
using BoincProjectList = QList<api::BoincProject>;
using BoincTaskList = QList<api::BoincTask>;
using BoincTransferList = QList<api::BoincTransfer>;
using BoincNoticeList = QList<api::BoincNotice>;

/// Registers the types with QtDBus; call once before the first call to nicerd.
void registerBusTypes();

// One value of each type a property or a bus struct's field can have (api::busSignature): busValue() is
// what QtDBus writes for it; readBusValue() reads the QVariant QtDBus made of a value of its signature (the
// caller checked the signature). Strings travel as QString (UTF-8 in the api types).
inline bool busValue(bool value) {
    return value;
}
inline uint busValue(std::uint32_t value) {
    return value;
}
inline qulonglong busValue(std::uint64_t value) {
    return value;
}
inline qlonglong busValue(std::int64_t value) {
    return value;
}
inline double busValue(double value) {
    return value;
}
inline QString busValue(const std::string& value) {
    return QString::fromStdString(value);
}
/// x, -1 for none.
inline qlonglong busValue(const std::optional<std::int64_t>& value) {
    return value.value_or(-1);
}
template <api::KeywordEnum Enum>
QString busValue(Enum value) {
    return QString::fromLatin1(api::busKeyword(value));
}

void readBusValue(const QVariant& value, bool& field);
void readBusValue(const QVariant& value, std::uint32_t& field);
void readBusValue(const QVariant& value, std::uint64_t& field);
void readBusValue(const QVariant& value, std::int64_t& field);
void readBusValue(const QVariant& value, double& field);
void readBusValue(const QVariant& value, std::string& field);
/// A negative value reads as none.
void readBusValue(const QVariant& value, std::optional<std::int64_t>& field);
void readBusValue(const QVariant& value, std::vector<std::string>& field);
/// A keyword this client does not know reads as api::BusKeywords' unknown.
template <api::KeywordEnum Enum>
void readBusValue(const QVariant& value, Enum& field) {
    field = api::fromBusKeyword<Enum>(value.toString().toStdString());
}
/// An array of one of the bus's structs, as QtDBus leaves it: a QDBusArgument (the operators below read it).
template <api::BusStruct Struct>
void readBusValue(const QVariant& value, std::vector<Struct>& field) {
    const auto list = qdbus_cast<QList<Struct>>(qvariant_cast<QDBusArgument>(value));
    field.assign(list.begin(), list.end());
}

/// A bus struct from a message's arguments, one per field (the Sample signal's). False when they are fewer
/// or of other types than its fields; arguments after them (a newer nicerd's) are left.
template <api::BusStruct Struct>
bool readArguments(const QList<QVariant>& arguments, const QString& signature, Struct& value) {
    if (!signature.startsWith(QLatin1String(api::kFieldsSignature<Struct>.data()))) {
        return false;
    }
    std::size_t i = 0;
    api::forEachField<Struct>(
        [&](const auto& field) { readBusValue(arguments.at(qsizetype(i++)), value.*field.member); });
    return true;
}

} // namespace nicer::tray

namespace nicer::api {

// In api's namespace, where argument-dependent lookup finds them: one pair for every bus struct.
template <BusStruct Struct>
QDBusArgument& operator<<(QDBusArgument& arg, const Struct& value) {
    arg.beginStructure();
    forEachField<Struct>([&](const auto& field) { arg << tray::busValue(value.*field.member); });
    arg.endStructure();
    return arg;
}

template <BusStruct Struct>
const QDBusArgument& operator>>(const QDBusArgument& arg, Struct& value) {
    arg.beginStructure();
    forEachField<Struct>(
        [&](const auto& field) { tray::readBusValue(arg.asVariant(), value.*field.member); });
    arg.endStructure();
    return arg;
}

} // namespace nicer::api

Q_DECLARE_METATYPE(nicer::api::PresetInfo)
Q_DECLARE_METATYPE(nicer::api::DownloadEntry)
Q_DECLARE_METATYPE(nicer::api::Sample)
Q_DECLARE_METATYPE(nicer::api::BoincProject)
Q_DECLARE_METATYPE(nicer::api::BoincTask)
Q_DECLARE_METATYPE(nicer::api::BoincTransfer)
Q_DECLARE_METATYPE(nicer::api::BoincNotice)
