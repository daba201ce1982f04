#pragma once

#include "api/Boinc.h"
#include "api/DownloadEntry.h"
#include "api/Sample.h"

#include <QDBusArgument>
#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

// nicerd's struct types as QtDBus reads them: the generated proxy (org.nicer.Daemon1.xml,
// qt_add_dbus_interface) names these in its QtTypeName annotations. The field order is api/BusNames.h's
// signatures.

namespace nicer::tray {

/// A workload preset as nicerd offers it: (sssb).
struct PresetChoice {
    QString id;
    QString name;
    QString description;
    bool available = false;
};

/// One work unit nicerd downloads (its Downloads property): (sttdsbsx).
struct DownloadRow {
    QString name;
    qulonglong bytesDone = 0;
    qulonglong bytesTotal = 0; ///< 0 while unknown
    double rate = 0.0;         ///< bytes per second now
    api::DownloadState state = api::DownloadState::Queued;
    bool verified = false;                ///< ok or present: checked against a hash
    QString reason;                       ///< waiting or failed: why
    std::optional<qint64> retryInSeconds; ///< failed: when nicerd tries again
};

using PresetChoiceList = QList<PresetChoice>;
using DownloadRowList = QList<DownloadRow>;
using SampleList = QList<api::Sample>;
using BoincProjectList = QList<api::BoincProject>;
using BoincTaskList = QList<api::BoincTask>;
using BoincTransferList = QList<api::BoincTransfer>;
using BoincNoticeList = QList<api::BoincNotice>;

/// Registers the types with QtDBus; call once before the first call to nicerd.
void registerBusTypes();

QDBusArgument& operator<<(QDBusArgument& arg, const PresetChoice& p);
const QDBusArgument& operator>>(const QDBusArgument& arg, PresetChoice& p);
QDBusArgument& operator<<(QDBusArgument& arg, const DownloadRow& row);
const QDBusArgument& operator>>(const QDBusArgument& arg, DownloadRow& row);

} // namespace nicer::tray

namespace nicer::api {
// In api's namespace, where argument-dependent lookup finds them.
QDBusArgument& operator<<(QDBusArgument& arg, const Sample& s);
const QDBusArgument& operator>>(const QDBusArgument& arg, Sample& s);
QDBusArgument& operator<<(QDBusArgument& arg, const BoincProject& p);
const QDBusArgument& operator>>(const QDBusArgument& arg, BoincProject& p);
QDBusArgument& operator<<(QDBusArgument& arg, const BoincTask& t);
const QDBusArgument& operator>>(const QDBusArgument& arg, BoincTask& t);
QDBusArgument& operator<<(QDBusArgument& arg, const BoincTransfer& t);
const QDBusArgument& operator>>(const QDBusArgument& arg, BoincTransfer& t);
QDBusArgument& operator<<(QDBusArgument& arg, const BoincNotice& n);
const QDBusArgument& operator>>(const QDBusArgument& arg, BoincNotice& n);
} // namespace nicer::api

Q_DECLARE_METATYPE(nicer::tray::PresetChoice)
Q_DECLARE_METATYPE(nicer::tray::DownloadRow)
Q_DECLARE_METATYPE(nicer::api::Sample)
Q_DECLARE_METATYPE(nicer::api::BoincProject)
Q_DECLARE_METATYPE(nicer::api::BoincTask)
Q_DECLARE_METATYPE(nicer::api::BoincTransfer)
Q_DECLARE_METATYPE(nicer::api::BoincNotice)
