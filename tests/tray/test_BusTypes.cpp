// The tray's QDBusArgument operators of the api's structs, through a real bus: written by one connection,
// sent back by another as it came, and read again, with their signatures checked against the ones their
// field lists give (api/BusStruct.h).

#include "api/BusStruct.h"
#include "tray/BoincTestData.h"
#include "tray/BusTypes.h"
#include "tray/PrivateBus.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusMetaType>
#include <QDBusPendingCall>
#include <QDBusVirtualObject>
#include <QTest>
#include <catch2/catch.hpp>

#include <vector>

using nicer::api::DownloadEntry;
using nicer::api::DownloadState;
using nicer::api::PresetInfo;

namespace {

using nicer::tray::test::kBusWaitMs;
constexpr auto kPath = "/org/nicer/Echo";
constexpr auto kInterface = "org.nicer.Echo";

/// Answers every call with its own arguments, as they arrived (never read into the tray's types).
class Echo : public QDBusVirtualObject {
public:
    explicit Echo(QDBusConnection connection)
        : m_connection(std::move(connection)) {}
    QString introspect(const QString&) const override { return {}; }
    bool handleMessage(const QDBusMessage& message, const QDBusConnection&) override {
        return m_connection.send(message.createReply(message.arguments()));
    }

private:
    QDBusConnection m_connection;
};

/// @p value sent to the echo and back: the reply's one argument.
QVariant roundTrip(const QVariant& value) {
    nicer::tray::test::PrivateBus bus;
    QDBusConnection server = bus.connect("echo");
    QDBusConnection client = bus.connect("client");
    Echo echo(server);
    REQUIRE(server.registerVirtualObject(kPath, &echo));
    auto call = QDBusMessage::createMethodCall(server.baseService(), kPath, kInterface, "Echo");
    call << value;
    QDBusPendingCall pending = client.asyncCall(call);
    REQUIRE(QTest::qWaitFor([&] { return pending.isFinished(); }, kBusWaitMs));
    const QDBusMessage reply = pending.reply();
    INFO(reply.errorMessage().toStdString());
    REQUIRE(reply.type() == QDBusMessage::ReplyMessage);
    server.unregisterObject(kPath);
    return reply.arguments().value(0);
}

/// @p values sent to the echo as a list and read back; the list's signature is checked on the way.
template <nicer::api::BusStruct Struct>
std::vector<Struct> roundTripList(const std::vector<Struct>& values) {
    const QString signature = QString::fromLatin1(nicer::api::kArraySignature<Struct>.data());
    // The signature QtDBus gives the registered type is the one the field list gives.
    CHECK(QString::fromLatin1(QDBusMetaType::typeToSignature(QMetaType::fromType<QList<Struct>>())) ==
          signature);
    const QVariant back = roundTrip(QVariant::fromValue(QList<Struct>(values.begin(), values.end())));
    const auto arg = qvariant_cast<QDBusArgument>(back);
    CHECK(arg.currentSignature() == signature);
    const auto read = qdbus_cast<QList<Struct>>(arg);
    return {read.begin(), read.end()};
}

} // namespace

TEST_CASE("presets and downloads round-trip through QtDBus in nicerd's signatures", "[tray]") {
    nicer::tray::registerBusTypes();

    const std::vector<PresetInfo> presets = {
        {"demo", "Demo", "md5sum of /dev/zero", true},
        {"boinc", "BOINC \u00e9t\u00e9", "Einstein@Home \u2014 and others", false},
    };
    CHECK(roundTripList(presets) == presets);

    DownloadEntry failed;
    failed.name = "units/\u00fc.bin";
    failed.bytesDone = 5'000'000'000ULL; // past 32 bits
    failed.bytesTotal = 6'000'000'000ULL;
    failed.state = DownloadState::Failed;
    failed.reason = "the server answered 404 Not Found";
    failed.retryInSeconds = 600;
    DownloadEntry done;
    done.name = "a.bin";
    done.bytesDone = done.bytesTotal = 1024;
    done.rate = 0.0;
    done.state = DownloadState::Ok;
    done.verified = true;
    DownloadEntry downloading;
    downloading.name = "b.bin";
    downloading.rate = 131072.5;
    downloading.state = DownloadState::Downloading;
    const std::vector<DownloadEntry> downloads = {failed, done, downloading};
    CHECK(roundTripList(downloads) == downloads);
}

TEST_CASE("samples and BOINC's lists round-trip through QtDBus in nicerd's signatures", "[tray]") {
    nicer::tray::registerBusTypes();

    // Every field apart from its default, one of them held by a rule, and one paused.
    nicer::api::Sample paused;
    paused.paused = true;
    const std::vector<nicer::api::Sample> samples = {
        {1'700'000'000'123'456ULL, 0.25, 0.5, 0.25, 0.125, 0.3, 2.0, 7, false, true, 81.5, "temperature"},
        paused};
    CHECK(roundTripList(samples) == samples);

    const auto boinc = nicer::tray::test::realisticBoinc(1'700'000'000, true);
    REQUIRE_FALSE(boinc.tasks.empty());
    auto tasks = boinc.tasks;
    tasks.front().cpuSeconds = 11'000.5;
    tasks.front().elapsedLimitSeconds = 90'000.0;
    CHECK(roundTripList(boinc.projects) == boinc.projects);
    CHECK(roundTripList(tasks) == tasks);
    CHECK(roundTripList(boinc.transfers) == boinc.transfers);
    CHECK(roundTripList(boinc.notices) == boinc.notices);
}
