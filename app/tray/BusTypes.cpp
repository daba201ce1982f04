#include "tray/BusTypes.h"

#include <QDBusMetaType>

namespace nicer::tray {

void registerBusTypes() {
    qDBusRegisterMetaType<api::PresetInfo>();
    qDBusRegisterMetaType<PresetInfoList>();
    qDBusRegisterMetaType<api::DownloadEntry>();
    qDBusRegisterMetaType<DownloadEntryList>();
    qDBusRegisterMetaType<api::Sample>();
    qDBusRegisterMetaType<SampleList>();
    qDBusRegisterMetaType<api::BoincProject>();
    qDBusRegisterMetaType<BoincProjectList>();
    qDBusRegisterMetaType<api::BoincTask>();
    qDBusRegisterMetaType<BoincTaskList>();
    qDBusRegisterMetaType<api::BoincTransfer>();
    qDBusRegisterMetaType<BoincTransferList>();
    qDBusRegisterMetaType<api::BoincNotice>();
    qDBusRegisterMetaType<BoincNoticeList>();
}

} // namespace nicer::tray

namespace nicer::api {

namespace {

/// The api types hold UTF-8 std::strings; QtDBus speaks QString.
QString q(const std::string& text) {
    return QString::fromStdString(text);
}

/// Reads a string field into a std::string.
const QDBusArgument& readString(const QDBusArgument& arg, std::string& out) {
    QString text;
    arg >> text;
    out = text.toStdString();
    return arg;
}

} // namespace

QDBusArgument& operator<<(QDBusArgument& arg, const PresetInfo& p) {
    arg.beginStructure();
    arg << q(p.id) << q(p.name) << q(p.description) << p.available;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, PresetInfo& p) {
    arg.beginStructure();
    readString(arg, p.id);
    readString(arg, p.name);
    readString(arg, p.description);
    arg >> p.available;
    arg.endStructure();
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const DownloadEntry& e) {
    arg.beginStructure();
    arg << q(e.name) << qulonglong(e.bytesDone) << qulonglong(e.bytesTotal) << e.rate
        << QString::fromLatin1(downloadStateKeyword(e.state)) << e.verified << q(e.reason)
        << qint64(e.retryInSeconds.value_or(-1));
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, DownloadEntry& e) {
    qulonglong done = 0, total = 0;
    QString state;
    qint64 retryIn = -1;
    arg.beginStructure();
    readString(arg, e.name);
    arg >> done >> total >> e.rate >> state >> e.verified;
    readString(arg, e.reason);
    arg >> retryIn;
    arg.endStructure();
    e.bytesDone = done;
    e.bytesTotal = total;
    // An unknown keyword shows as queued, as the interface says: it changes soon.
    e.state = downloadStateFromKeyword(state.toStdString()).value_or(DownloadState::Queued);
    e.retryInSeconds = retryIn >= 0 ? std::optional<std::int64_t>(retryIn) : std::nullopt;
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const Sample& s) {
    arg.beginStructure();
    arg << qulonglong(s.timeUSec) << s.idle << s.foreground << s.background << s.outside << s.quota
        << s.multiplier << uint(s.overloadCount) << s.paused << s.outsideSignal << s.temperature
        << QString::fromStdString(s.heldBy);
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, Sample& s) {
    qulonglong time = 0;
    uint overloads = 0;
    QString heldBy;
    arg.beginStructure();
    arg >> time >> s.idle >> s.foreground >> s.background >> s.outside >> s.quota >> s.multiplier >>
        overloads >> s.paused >> s.outsideSignal >> s.temperature >> heldBy;
    arg.endStructure();
    s.heldBy = heldBy.toStdString();
    s.timeUSec = time;
    s.overloadCount = overloads;
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const BoincProject& p) {
    arg.beginStructure();
    arg << q(p.url) << q(p.name) << p.userCredit << p.hostCredit << p.recentCredit << p.suspended
        << p.noMoreWork << p.viaAccountManager;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, BoincProject& p) {
    arg.beginStructure();
    readString(arg, p.url);
    readString(arg, p.name);
    arg >> p.userCredit >> p.hostCredit >> p.recentCredit >> p.suspended >> p.noMoreWork >>
        p.viaAccountManager;
    arg.endStructure();
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const BoincTask& t) {
    arg.beginStructure();
    arg << q(t.name) << q(t.projectUrl) << q(t.state) << t.fractionDone << t.elapsedSeconds
        << t.remainingSeconds << qint64(t.deadline) << t.cpuSeconds << t.elapsedLimitSeconds;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, BoincTask& t) {
    qint64 deadline = 0;
    arg.beginStructure();
    readString(arg, t.name);
    readString(arg, t.projectUrl);
    readString(arg, t.state);
    arg >> t.fractionDone >> t.elapsedSeconds >> t.remainingSeconds >> deadline >> t.cpuSeconds >>
        t.elapsedLimitSeconds;
    arg.endStructure();
    t.deadline = deadline;
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const BoincTransfer& t) {
    arg.beginStructure();
    arg << q(t.name) << q(t.projectUrl) << t.upload << t.bytesTotal << t.bytesDone << t.rate << q(t.state);
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, BoincTransfer& t) {
    arg.beginStructure();
    readString(arg, t.name);
    readString(arg, t.projectUrl);
    arg >> t.upload >> t.bytesTotal >> t.bytesDone >> t.rate;
    readString(arg, t.state);
    arg.endStructure();
    return arg;
}

QDBusArgument& operator<<(QDBusArgument& arg, const BoincNotice& n) {
    arg.beginStructure();
    arg << qint64(n.seqno) << qint64(n.time) << q(n.project) << q(n.title) << q(n.text) << n.error;
    arg.endStructure();
    return arg;
}

const QDBusArgument& operator>>(const QDBusArgument& arg, BoincNotice& n) {
    qint64 seqno = 0, time = 0;
    arg.beginStructure();
    arg >> seqno >> time;
    readString(arg, n.project);
    readString(arg, n.title);
    readString(arg, n.text);
    arg >> n.error;
    arg.endStructure();
    n.seqno = seqno;
    n.time = time;
    return arg;
}

} // namespace nicer::api
