#pragma once

#include "api/Boinc.h"
#include "api/DownloadEntry.h"
#include "api/PresetInfo.h"
#include "api/Sample.h"

#include <QDBusArgument>
#include <QList>
#include <QMetaType>
#include <QString>

// nicerd's struct types as QtDBus reads them: the generated proxy (org.nicer.Daemon1.xml,
// qt_add_dbus_interface) names the lists in its QtTypeName annotations. The field order is api/BusNames.h's
// signatures.

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

} // namespace nicer::tray

namespace nicer::api {
// In api's namespace, where argument-dependent lookup finds them. Strings travel as QString (UTF-8 in the
// api types).
QDBusArgument& operator<<(QDBusArgument& arg, const PresetInfo& p);
const QDBusArgument& operator>>(const QDBusArgument& arg, PresetInfo& p);
QDBusArgument& operator<<(QDBusArgument& arg, const DownloadEntry& e);
const QDBusArgument& operator>>(const QDBusArgument& arg, DownloadEntry& e);
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

Q_DECLARE_METATYPE(nicer::api::PresetInfo)
Q_DECLARE_METATYPE(nicer::api::DownloadEntry)
Q_DECLARE_METATYPE(nicer::api::Sample)
Q_DECLARE_METATYPE(nicer::api::BoincProject)
Q_DECLARE_METATYPE(nicer::api::BoincTask)
Q_DECLARE_METATYPE(nicer::api::BoincTransfer)
Q_DECLARE_METATYPE(nicer::api::BoincNotice)
