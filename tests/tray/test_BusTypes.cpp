// The tray's QDBusArgument operators of the api's structs, through a real bus: written by one connection,
// sent back by another as it came, and read again, with their signatures checked against api/BusNames.h.

#include "api/BusNames.h"
#include "tray/BusTypes.h"
#include "tray/PrivateBus.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCall>
#include <QDBusVirtualObject>
#include <QTest>
#include <catch2/catch.hpp>

#include <vector>

using nicer::api::DownloadEntry;
using nicer::api::DownloadState;
using nicer::api::PresetInfo;

namespace {

constexpr int kWaitMs = 30'000; // a bound on a stuck bus, never a performance claim
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
    REQUIRE(QTest::qWaitFor([&] { return pending.isFinished(); }, kWaitMs));
    const QDBusMessage reply = pending.reply();
    INFO(reply.errorMessage().toStdString());
    REQUIRE(reply.type() == QDBusMessage::ReplyMessage);
    server.unregisterObject(kPath);
    return reply.arguments().value(0);
}

} // namespace

TEST_CASE("presets and downloads round-trip through QtDBus in nicerd's signatures", "[tray]") {
    nicer::tray::registerBusTypes();

    const std::vector<PresetInfo> presets = {
        {"demo", "Demo", "md5sum of /dev/zero", true},
        {"boinc", "BOINC \u00e9t\u00e9", "Einstein@Home \u2014 and others", false},
    };
    const QVariant presetsBack =
        roundTrip(QVariant::fromValue(nicer::tray::PresetInfoList(presets.begin(), presets.end())));
    const auto presetsArg = qvariant_cast<QDBusArgument>(presetsBack);
    CHECK(presetsArg.currentSignature() == QStringLiteral("a(%1)").arg(nicer::api::kPresetSignature));
    const auto presetsRead = qdbus_cast<nicer::tray::PresetInfoList>(presetsArg);
    CHECK(std::vector<PresetInfo>(presetsRead.begin(), presetsRead.end()) == presets);

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
    const QVariant downloadsBack =
        roundTrip(QVariant::fromValue(nicer::tray::DownloadEntryList(downloads.begin(), downloads.end())));
    const auto downloadsArg = qvariant_cast<QDBusArgument>(downloadsBack);
    CHECK(downloadsArg.currentSignature() == QStringLiteral("a(%1)").arg(nicer::api::kDownloadSignature));
    const auto downloadsRead = qdbus_cast<nicer::tray::DownloadEntryList>(downloadsArg);
    CHECK(std::vector<DownloadEntry>(downloadsRead.begin(), downloadsRead.end()) == downloads);
}
