#include "tray/BusTypes.h"

#include <QDBusMetaType>

namespace nicer::tray {

void registerBusTypes() {
    qDBusRegisterMetaType<PresetChoice>();
    qDBusRegisterMetaType<PresetChoiceList>();
    qDBusRegisterMetaType<DownloadRow>();
    qDBusRegisterMetaType<DownloadRowList>();
    qDBusRegisterMetaType<api::Sample>();
    qDBusRegisterMetaType<SampleList>();
}

QDBusArgument& operator<<(QDBusArgument& arg, const PresetChoice& p) {
    arg.beginStructure();
    arg << p.id << p.name << p.description << p.available;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, PresetChoice& p) {
    arg.beginStructure();
    arg >> p.id >> p.name >> p.description >> p.available;
    arg.endStructure();
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const DownloadRow& row) {
    arg.beginStructure();
    arg << row.name << row.bytesDone << row.bytesTotal << row.rate
        << QString::fromLatin1(api::downloadStateKeyword(row.state)) << row.verified << row.reason
        << row.retryInSeconds.value_or(-1);
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, DownloadRow& row) {
    QString state;
    qint64 retryIn = -1;
    arg.beginStructure();
    arg >> row.name >> row.bytesDone >> row.bytesTotal >> row.rate >> state >> row.verified >> row.reason >>
        retryIn;
    arg.endStructure();
    // A state this tray does not know yet (a newer nicerd's) shows as queued: it changes soon.
    row.state = api::downloadStateFromKeyword(state.toStdString()).value_or(api::DownloadState::Queued);
    row.retryInSeconds = retryIn >= 0 ? std::optional<qint64>(retryIn) : std::nullopt;
    return arg;
}

} // namespace nicer::tray

namespace nicer::api {

QDBusArgument& operator<<(QDBusArgument& arg, const Sample& s) {
    arg.beginStructure();
    arg << qulonglong(s.timeUSec) << s.idle << s.foreground << s.background << s.quota << s.multiplier
        << uint(s.overloadCount) << s.paused;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, Sample& s) {
    qulonglong time = 0;
    uint overloads = 0;
    arg.beginStructure();
    arg >> time >> s.idle >> s.foreground >> s.background >> s.quota >> s.multiplier >> overloads >> s.paused;
    arg.endStructure();
    s.timeUSec = time;
    s.overloadCount = overloads;
    return arg;
}

} // namespace nicer::api
