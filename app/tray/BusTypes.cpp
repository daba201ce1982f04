#include "tray/BusTypes.h"

#include <QDBusMetaType>

namespace nicer::tray {

namespace {

template <api::BusStruct Struct>
void registerStruct() {
    qDBusRegisterMetaType<Struct>();
    qDBusRegisterMetaType<QList<Struct>>();
}

} // namespace

void registerBusTypes() {
    registerStruct<api::PresetInfo>();
    registerStruct<api::DownloadEntry>();
    registerStruct<api::Sample>();
    registerStruct<api::BoincProject>();
    registerStruct<api::BoincTask>();
    registerStruct<api::BoincTransfer>();
    registerStruct<api::BoincNotice>();
}

void readBusValue(const QVariant& value, bool& field) {
    field = value.toBool();
}
void readBusValue(const QVariant& value, std::uint32_t& field) {
    field = value.toUInt();
}
void readBusValue(const QVariant& value, std::uint64_t& field) {
    field = value.toULongLong();
}
void readBusValue(const QVariant& value, std::int64_t& field) {
    field = value.toLongLong();
}
void readBusValue(const QVariant& value, double& field) {
    field = value.toDouble();
}
void readBusValue(const QVariant& value, std::string& field) {
    field = value.toString().toStdString();
}
void readBusValue(const QVariant& value, std::optional<std::int64_t>& field) {
    const qlonglong x = value.toLongLong();
    field = x >= 0 ? std::optional<std::int64_t>(x) : std::nullopt;
}
void readBusValue(const QVariant& value, std::vector<std::string>& field) {
    const QStringList list = value.toStringList();
    field.clear();
    for (const QString& text : list) {
        field.push_back(text.toStdString());
    }
}

} // namespace nicer::tray
