#include "desktop/PowerWatch.h"

#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace nicer::desktop {

namespace {

using libsystemd::BusSlot;
using libsystemd::MessageReader;

constexpr const char* kUpower = "org.freedesktop.UPower";
constexpr const char* kUpowerPath = "/org/freedesktop/UPower";
constexpr const char* kDeviceInterface = "org.freedesktop.UPower.Device";
constexpr const char* kDefaultDisplayPath = "/org/freedesktop/UPower/devices/DisplayDevice";
constexpr const char* kProperties = "org.freedesktop.DBus.Properties";

/// power-profiles-daemon's bus name, object and interface: the first is what Debian 12's 0.12 has, the second
/// the name that later versions add beside it.
struct ProfilesName {
    const char* name;
    const char* path;
    const char* interface;
};
constexpr std::array<ProfilesName, 2> kProfilesNames{{
    {"net.hadess.PowerProfiles", "/net/hadess/PowerProfiles", "net.hadess.PowerProfiles"},
    {"org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles",
     "org.freedesktop.UPower.PowerProfiles"},
}};

/// The properties the watch reads, from GetAll's reply or from PropertiesChanged.
struct Properties {
    std::optional<bool> onBattery;
    std::optional<bool> isPresent;
    std::optional<double> percentage;
    std::optional<std::string> activeProfile;
    bool invalidated = false; ///< PropertiesChanged named one of them without its value
};

bool wanted(std::string_view name) {
    return name == "OnBattery" || name == "IsPresent" || name == "Percentage" || name == "ActiveProfile";
}

/// Reads an a{sv} into @p into: the wanted properties with the type they should have; the rest passed over.
void readDictionary(MessageReader& in, Properties& into) {
    in.enter('a', "{sv}");
    while (in.enter('e', "sv")) {
        const char* rawName = nullptr;
        in.read("s", &rawName);
        const std::string_view name = rawName != nullptr ? rawName : "";
        char type = 0;
        const char* contents = nullptr;
        in.peekType(&type, &contents);
        const std::string_view signature = contents != nullptr ? contents : "";
        int flag = 0;
        double number = 0;
        const char* text = nullptr;
        if ((name == "OnBattery" || name == "IsPresent") && signature == "b" && in.read("v", "b", &flag)) {
            (name == "OnBattery" ? into.onBattery : into.isPresent) = flag != 0;
        } else if (name == "Percentage" && signature == "d" && in.read("v", "d", &number)) {
            into.percentage = number;
        } else if (name == "ActiveProfile" && signature == "s" && in.read("v", "s", &text)) {
            into.activeProfile = text;
        } else {
            in.skip("v");
        }
        in.exit();
    }
    in.exit();
}

/// PropertiesChanged's interface, changed values and invalidated names.
Properties readPropertiesChanged(sd_bus_message* signal) {
    Properties properties;
    MessageReader in(signal);
    in.skip("s");
    readDictionary(in, properties);
    in.enter('a', "s");
    const char* name = nullptr;
    while (in.read("s", &name)) {
        properties.invalidated = properties.invalidated || wanted(name);
    }
    in.exit();
    return properties;
}

std::string propertiesChangedRule(const char* sender, const std::string& path, const char* interface) {
    return std::string("type='signal',sender='") + sender + "',path='" + path +
           "',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='" + interface +
           "'";
}

/// Why UPower's failed answer leaves it unused.
std::string upowerFailure(const sd_bus_error* error) {
    if (libsystemd::serviceAbsent(error)) {
        return "UPower is not on the system bus";
    }
    return "UPower did not answer (" + libsystemd::busErrorText(-EIO, error) + ")";
}

/// The properties in UPower's answer @p reply to a GetAll, or why it is no use (@p unreadable when its values
/// cannot be read).
Result<Properties> upowerAnswer(sd_bus_message* reply, const char* unreadable) {
    if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
        return Error{upowerFailure(error)};
    }
    Properties properties;
    MessageReader in(reply);
    readDictionary(in, properties);
    if (!in.ok()) {
        return Error{unreadable};
    }
    return properties;
}

} // namespace

struct PowerWatch::ProfilesService {
    std::size_t name; ///< which of kProfilesNames
    BusSlot ownerMatch;
    BusSlot changedMatch;
    BusSlot call;
    bool powerSaver = false;
};

PowerWatch::PowerWatch(sd_event* event, Options options, std::function<void()> changed)
    : m_options(std::move(options))
    , m_changed(std::move(changed))
    , m_bus(event, libsystemd::BusTarget::systemOr(m_options.systemBusAddress),
            {.connected = [this](sd_bus*) { return watch(); },
             .lost = [this] { onDisconnected(); },
             .onError =
                 [this](std::string_view what) { m_note = "the power watch failed: " + std::string(what); }})
    , m_reason("waiting for UPower's answer") {
    for (std::size_t i = 0; i < m_profiles.size(); ++i) {
        m_profiles[i] = std::make_unique<ProfilesService>(ProfilesService{i, {}, {}, {}});
    }
}

PowerWatch::~PowerWatch() {
    disconnect();
}

Result<std::unique_ptr<PowerWatch>> PowerWatch::create(sd_event* event, Options options,
                                                       std::function<void()> changed) {
    if (event == nullptr) {
        return Error{"the power watch needs nicerd's event loop"};
    }
    std::unique_ptr<PowerWatch> watch(new PowerWatch(event, std::move(options), std::move(changed)));
    // The fallback's values at once, so that nicerd's rules have a state before the bus answers.
    watch->readFallback();
    watch->connect();
    watch->publish();
    watch->m_notify = true; // from now on, from the loop
    return watch;
}

void PowerWatch::connect() {
    if (auto connected = m_bus.connect(); !connected) {
        disconnect();
        const std::string& why = connected.error().message;
        fallBack(connected.error().kind == ErrorKind::Unavailable ? "no system bus (" + why + ")" : why);
    }
}

void PowerWatch::disconnect() {
    for (auto& service : m_profiles) {
        service->ownerMatch.reset();
        service->changedMatch.reset();
        service->call.reset();
        service->powerSaver = false;
    }
    m_upowerCall.reset();
    m_displayMatch.reset();
    m_upowerMatch.reset();
    m_upowerOwnerMatch.reset();
    m_bus.close();
    m_displayPath.clear();
    m_upowerActive = false;
}

Result<void> PowerWatch::watch() {
    m_displayPath = kDefaultDisplayPath;
    // The matches go to the bus before the calls that read the values: a change after a call's answer is
    // signalled.
    const auto upowerRule = [&](const std::string& path, const char* interface) {
        return propertiesChangedRule(kUpower, path, interface);
    };
    const auto changed = [this](sd_bus_message* signal) { onUpowerChanged(signal); };
    struct Match {
        BusSlot& slot;
        std::string rule;
        libsystemd::MessageCallback callback;
    };
    std::vector<Match> matches;
    matches.push_back({m_upowerOwnerMatch, libsystemd::nameOwnerRule(kUpower),
                       [this](sd_bus_message* signal) { onUpowerOwner(signal); }});
    matches.push_back({m_upowerMatch, upowerRule(kUpowerPath, kUpower), changed});
    matches.push_back({m_displayMatch, upowerRule(m_displayPath, kDeviceInterface), changed});
    for (auto& service : m_profiles) {
        ProfilesService* s = service.get();
        const ProfilesName& n = kProfilesNames[s->name];
        matches.push_back({s->ownerMatch, libsystemd::nameOwnerRule(n.name),
                           [this, s](sd_bus_message* signal) { onProfilesOwner(*s, signal); }});
        matches.push_back({s->changedMatch, propertiesChangedRule(n.name, n.path, n.interface),
                           [this, s](sd_bus_message* message) { onProfiles(*s, message); }});
    }
    for (auto& match : matches) {
        if (auto added = addMatch(match.slot, match.rule, std::move(match.callback)); !added) {
            return Error{"cannot watch UPower on the system bus (" + added.error().message + ")"};
        }
    }
    m_reason = "waiting for UPower's answer";
    askUpower();
    for (auto& service : m_profiles) {
        askProfiles(*service);
    }
    return {};
}

Result<void> PowerWatch::addMatch(BusSlot& slot, const std::string& rule,
                                  libsystemd::MessageCallback callback) {
    auto made = m_bus.addMatch(rule, std::move(callback));
    if (!made) {
        return made.error();
    }
    slot = std::move(*made);
    return {};
}

Result<void> PowerWatch::callAsync(BusSlot& slot, const char* destination, const char* path,
                                   const char* interface, const char* method,
                                   libsystemd::MessageCallback callback, const char* argument) {
    slot.reset(); // an earlier call's answer is not wanted any more
    // A daemon that is not running is not started for nicerd (callMethod): its absence is what the watch
    // reports.
    auto made = m_bus.callMethod(
        {destination, path, interface, method},
        [argument](libsystemd::MessageWriter& out) {
            if (argument != nullptr) {
                out.append("s", argument);
            }
        },
        std::move(callback), libsystemd::kCallTimeoutUsec);
    if (!made) {
        return made.error();
    }
    slot = std::move(*made);
    return {};
}

void PowerWatch::askUpower() {
    if (auto asked = callAsync(
            m_upowerCall, kUpower, kUpowerPath, kUpower, "GetDisplayDevice",
            [this](sd_bus_message* reply) { onDisplayPath(reply); }, nullptr);
        !asked) {
        fallBack("cannot ask UPower (" + asked.error().message + ")");
    }
}

void PowerWatch::askDisplayDevice() {
    if (auto asked = callAsync(
            m_upowerCall, kUpower, m_displayPath.c_str(), kProperties, "GetAll",
            [this](sd_bus_message* reply) { onDisplayProperties(reply); }, kDeviceInterface);
        !asked) {
        fallBack("cannot ask UPower (" + asked.error().message + ")");
    }
}

void PowerWatch::askProfiles(ProfilesService& service) {
    const ProfilesName& n = kProfilesNames[service.name];
    ProfilesService* s = &service;
    if (!callAsync(
            service.call, n.name, n.path, kProperties, "GetAll",
            [this, s](sd_bus_message* reply) { onProfiles(*s, reply); }, n.interface)) {
        service.powerSaver = false;
    }
}

void PowerWatch::fallBack(std::string reason) {
    m_upowerCall.reset();
    m_upowerActive = false;
    m_reason = std::move(reason);
    readFallback();
    publish();
}

void PowerWatch::readFallback() {
    m_fallback = readPowerSupplies(m_options.powerSupplyDir, m_fallbackNote);
}

void PowerWatch::publish() {
    PowerState next = m_fallback;
    std::string note;
    if (m_upowerActive) {
        next = PowerState{m_upowerOnBattery, m_displayPresent ? m_upowerPercent : -1.0, false, "UPower"};
    } else {
        note = m_reason + ": reading " + m_options.powerSupplyDir.string() +
               (m_fallbackNote.empty() ? "" : "; " + m_fallbackNote);
    }
    next.powerSaver = std::any_of(m_profiles.begin(), m_profiles.end(),
                                  [](const auto& service) { return service->powerSaver; });
    if (next == m_state && note == m_note) {
        return;
    }
    m_state = std::move(next);
    m_note = std::move(note);
    if (m_notify && m_changed) {
        m_changed();
    }
}

void PowerWatch::poll() {
    if (m_upowerActive) {
        return; // UPower tells its changes
    }
    if (!m_bus.isOpen()) {
        disconnect(); // a system bus that closed (or never was): try it again, once a period
        connect();
    }
    readFallback();
    publish();
}

void PowerWatch::onDisplayPath(sd_bus_message* reply) {
    if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
        fallBack(upowerFailure(error));
        return;
    }
    const char* path = nullptr;
    MessageReader in(reply);
    if (!in.read("o", &path) || path == nullptr) {
        fallBack("UPower's display device is not readable");
        return;
    }
    if (m_displayPath != path) {
        m_displayPath = path;
        if (auto added =
                addMatch(m_displayMatch, propertiesChangedRule(kUpower, m_displayPath, kDeviceInterface),
                         [this](sd_bus_message* signal) { onUpowerChanged(signal); });
            !added) {
            fallBack("cannot watch UPower's display device (" + added.error().message + ")");
            return;
        }
    }
    if (auto asked = callAsync(
            m_upowerCall, kUpower, kUpowerPath, kProperties, "GetAll",
            [this](sd_bus_message* answer) { onUpowerProperties(answer); }, kUpower);
        !asked) {
        fallBack("cannot ask UPower (" + asked.error().message + ")");
    }
}

void PowerWatch::onUpowerProperties(sd_bus_message* reply) {
    constexpr const char* kNoOnBattery = "UPower's answer has no OnBattery";
    const auto properties = upowerAnswer(reply, kNoOnBattery);
    if (!properties || !properties->onBattery) {
        fallBack(properties ? kNoOnBattery : properties.error().message);
        return;
    }
    m_upowerOnBattery = *properties->onBattery;
    askDisplayDevice();
}

void PowerWatch::onDisplayProperties(sd_bus_message* reply) {
    const auto found = upowerAnswer(reply, "UPower's display device is not readable");
    if (!found) {
        fallBack(found.error().message);
        return;
    }
    const Properties& properties = *found;
    m_upowerCall.reset();
    m_displayPresent = properties.isPresent.value_or(false);
    m_upowerPercent = properties.percentage.value_or(-1.0);
    m_upowerActive = true;
    m_reason.clear();
    publish();
}

void PowerWatch::onUpowerChanged(sd_bus_message* signal) {
    const Properties properties = readPropertiesChanged(signal);
    if (properties.invalidated) {
        askUpower(); // named without a value: read them all again
        return;
    }
    m_upowerOnBattery = properties.onBattery.value_or(m_upowerOnBattery);
    m_displayPresent = properties.isPresent.value_or(m_displayPresent);
    m_upowerPercent = properties.percentage.value_or(m_upowerPercent);
    publish();
}

void PowerWatch::onUpowerOwner(sd_bus_message* signal) {
    if (libsystemd::newOwner(signal).empty()) {
        fallBack("UPower left the system bus");
    } else {
        askUpower(); // back (or replaced): UPower again once it answers
    }
}

void PowerWatch::onProfiles(ProfilesService& service, sd_bus_message* message) {
    Properties properties;
    if (sd_bus_message_is_signal(message, kProperties, "PropertiesChanged") > 0) {
        properties = readPropertiesChanged(message);
        if (properties.invalidated) {
            askProfiles(service);
            return;
        }
    } else if (sd_bus_message_get_error(message) != nullptr) {
        service.call.reset();
        properties.activeProfile = ""; // not there (or not answering): no power saving from it
    } else {
        service.call.reset();
        MessageReader in(message);
        readDictionary(in, properties);
    }
    if (properties.activeProfile) {
        service.powerSaver = *properties.activeProfile == "power-saver";
        publish();
    }
}

void PowerWatch::onProfilesOwner(ProfilesService& service, sd_bus_message* signal) {
    if (libsystemd::newOwner(signal).empty()) {
        service.call.reset();
        service.powerSaver = false;
        publish();
    } else {
        askProfiles(service);
    }
}

void PowerWatch::onDisconnected() {
    // The connection is left to poll(), which opens a new one: it is still in sd-bus's hands here.
    for (auto& service : m_profiles) {
        service->powerSaver = false;
    }
    fallBack("the system bus closed");
}

} // namespace nicer::desktop
