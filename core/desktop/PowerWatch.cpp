#include "desktop/PowerWatch.h"

#include "desktop/BusWatch.h"
#include "libsystemd/Message.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

namespace nicer::desktop {

namespace {

using libsystemd::BusSlotPtr;
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
    if (serviceAbsent(error)) {
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

/// sd_bus_open_system(), or a bus client of @p address.
int openBus(const std::string& address, sd_bus** bus) {
    if (address.empty()) {
        return sd_bus_open_system(bus);
    }
    if (int r = sd_bus_new(bus); r < 0) {
        return r;
    }
    if (int r = sd_bus_set_address(*bus, address.c_str()); r < 0) {
        return r;
    }
    if (int r = sd_bus_set_bus_client(*bus, 1); r < 0) {
        return r;
    }
    return sd_bus_start(*bus);
}

} // namespace

struct PowerWatch::ProfilesService {
    PowerWatch* owner;
    const ProfilesName* name;
    BusSlotPtr ownerMatch;
    BusSlotPtr changedMatch;
    BusSlotPtr call;
    bool powerSaver = false;
};

PowerWatch::PowerWatch(sd_event* event, Options options, std::function<void()> changed)
    : m_event(event)
    , m_options(std::move(options))
    , m_changed(std::move(changed))
    , m_reason("waiting for UPower's answer") {
    for (std::size_t i = 0; i < m_profiles.size(); ++i) {
        m_profiles[i] =
            std::make_unique<ProfilesService>(ProfilesService{this, &kProfilesNames[i], {}, {}, {}});
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
    sd_bus* raw = nullptr;
    int r = openBus(m_options.systemBusAddress, &raw);
    libsystemd::BusPtr bus(raw);
    if (r < 0 || (r = sd_bus_attach_event(bus.get(), m_event, SD_EVENT_PRIORITY_NORMAL)) < 0) {
        fallBack("no system bus (" + libsystemd::busErrorText(r, nullptr) + ")");
        return;
    }
    m_bus = std::move(bus);
    if (r = addMatches(); r < 0) {
        disconnect();
        fallBack("cannot watch UPower on the system bus (" + libsystemd::busErrorText(r, nullptr) + ")");
        return;
    }
    m_reason = "waiting for UPower's answer";
    askUpower();
    for (auto& service : m_profiles) {
        askProfiles(*service);
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
    m_disconnected.reset();
    m_bus.reset();
    m_displayPath.clear();
    m_upowerActive = false;
}

int PowerWatch::addMatches() {
    sd_bus_slot* filter = nullptr;
    int r = sd_bus_add_filter(m_bus.get(), &filter, &PowerWatch::onDisconnected, this);
    if (r < 0) {
        return r;
    }
    m_disconnected.reset(filter);
    m_displayPath = kDefaultDisplayPath;
    // The matches go to the bus before the calls that read the values: a change after a call's answer is
    // signalled.
    const auto upowerRule = [&](const std::string& path, const char* interface) {
        return propertiesChangedRule(kUpower, path, interface);
    };
    for (const int added :
         {addMatch(m_upowerOwnerMatch, nameOwnerRule(kUpower), &PowerWatch::onUpowerOwner, this),
          addMatch(m_upowerMatch, upowerRule(kUpowerPath, kUpower), &PowerWatch::onUpowerChanged, this),
          addMatch(m_displayMatch, upowerRule(m_displayPath, kDeviceInterface), &PowerWatch::onUpowerChanged,
                   this)}) {
        if (added < 0) {
            return added;
        }
    }
    for (auto& service : m_profiles) {
        const ProfilesName& n = *service->name;
        if (r = addMatch(service->ownerMatch, nameOwnerRule(n.name), &PowerWatch::onProfilesOwner,
                         service.get());
            r < 0) {
            return r;
        }
        if (r = addMatch(service->changedMatch, propertiesChangedRule(n.name, n.path, n.interface),
                         &PowerWatch::onProfiles, service.get());
            r < 0) {
            return r;
        }
    }
    return 0;
}

int PowerWatch::addMatch(BusSlotPtr& slot, const std::string& rule, sd_bus_message_handler_t handler,
                         void* userdata) {
    sd_bus_slot* made = nullptr;
    // Asynchronous: sd_bus_add_match() would wait for the bus's answer on nicerd's loop.
    const int r = sd_bus_add_match_async(m_bus.get(), &made, rule.c_str(), handler, nullptr, userdata);
    if (r >= 0) {
        slot.reset(made);
    }
    return r;
}

int PowerWatch::callAsync(BusSlotPtr& slot, const char* destination, const char* path, const char* interface,
                          const char* method, sd_bus_message_handler_t handler, void* userdata,
                          const char* argument) {
    slot.reset(); // an earlier call's answer is not wanted any more
    sd_bus_message* raw = nullptr;
    if (int r = sd_bus_message_new_method_call(m_bus.get(), &raw, destination, path, interface, method);
        r < 0) {
        return r;
    }
    const libsystemd::BusMessagePtr call(raw);
    libsystemd::MessageWriter out(call.get());
    // A daemon that is not running is not started for nicerd: its absence is what the watch reports.
    out.run([&] { return sd_bus_message_set_auto_start(call.get(), 0); });
    if (argument != nullptr) {
        out.append("s", argument);
    }
    sd_bus_slot* made = nullptr;
    out.run([&] {
        return sd_bus_call_async(m_bus.get(), &made, call.get(), handler, userdata, kCallTimeoutUsec);
    });
    if (out.ok()) {
        slot.reset(made);
    }
    return out.result();
}

void PowerWatch::askUpower() {
    if (const int r = callAsync(m_upowerCall, kUpower, kUpowerPath, kUpower, "GetDisplayDevice",
                                &PowerWatch::onDisplayPath, this, nullptr);
        r < 0) {
        fallBack("cannot ask UPower (" + libsystemd::busErrorText(r, nullptr) + ")");
    }
}

void PowerWatch::askDisplayDevice() {
    if (const int r = callAsync(m_upowerCall, kUpower, m_displayPath.c_str(), kProperties, "GetAll",
                                &PowerWatch::onDisplayProperties, this, kDeviceInterface);
        r < 0) {
        fallBack("cannot ask UPower (" + libsystemd::busErrorText(r, nullptr) + ")");
    }
}

void PowerWatch::askProfiles(ProfilesService& service) {
    const ProfilesName& n = *service.name;
    if (callAsync(service.call, n.name, n.path, kProperties, "GetAll", &PowerWatch::onProfiles, &service,
                  n.interface) < 0) {
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
    if (!m_bus || sd_bus_is_open(m_bus.get()) <= 0) {
        disconnect(); // a system bus that closed (or never was): try it again, once a period
        connect();
    }
    readFallback();
    publish();
}

template <typename Step>
int PowerWatch::guarded(void* self, Step&& step) noexcept {
    auto* watch = static_cast<PowerWatch*>(self);
    try {
        std::forward<Step>(step)(*watch);
    } catch (const std::exception& e) {
        watch->failed(e.what());
    } catch (...) {
        watch->failed("unknown exception");
    }
    return 0;
}

void PowerWatch::failed(const char* what) noexcept {
    try {
        m_note = std::string("the power watch failed: ") + what;
    } catch (...) {
        // No memory for the note either: nothing more to tell.
    }
}

int PowerWatch::onDisplayPath(sd_bus_message* reply, void* userdata, sd_bus_error*) noexcept {
    return guarded(userdata, [reply](PowerWatch& self) {
        if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
            self.fallBack(upowerFailure(error));
            return;
        }
        const char* path = nullptr;
        MessageReader in(reply);
        if (!in.read("o", &path) || path == nullptr) {
            self.fallBack("UPower's display device is not readable");
            return;
        }
        if (self.m_displayPath != path) {
            self.m_displayPath = path;
            if (const int r = self.addMatch(
                    self.m_displayMatch, propertiesChangedRule(kUpower, self.m_displayPath, kDeviceInterface),
                    &PowerWatch::onUpowerChanged, &self);
                r < 0) {
                self.fallBack("cannot watch UPower's display device (" +
                              libsystemd::busErrorText(r, nullptr) + ")");
                return;
            }
        }
        if (const int r = self.callAsync(self.m_upowerCall, kUpower, kUpowerPath, kProperties, "GetAll",
                                         &PowerWatch::onUpowerProperties, &self, kUpower);
            r < 0) {
            self.fallBack("cannot ask UPower (" + libsystemd::busErrorText(r, nullptr) + ")");
        }
    });
}

int PowerWatch::onUpowerProperties(sd_bus_message* reply, void* userdata, sd_bus_error*) noexcept {
    return guarded(userdata, [reply](PowerWatch& self) {
        constexpr const char* kNoOnBattery = "UPower's answer has no OnBattery";
        const auto properties = upowerAnswer(reply, kNoOnBattery);
        if (!properties || !properties->onBattery) {
            self.fallBack(properties ? kNoOnBattery : properties.error().message);
            return;
        }
        self.m_upowerOnBattery = *properties->onBattery;
        self.askDisplayDevice();
    });
}

int PowerWatch::onDisplayProperties(sd_bus_message* reply, void* userdata, sd_bus_error*) noexcept {
    return guarded(userdata, [reply](PowerWatch& self) {
        const auto found = upowerAnswer(reply, "UPower's display device is not readable");
        if (!found) {
            self.fallBack(found.error().message);
            return;
        }
        const Properties& properties = *found;
        self.m_upowerCall.reset();
        self.m_displayPresent = properties.isPresent.value_or(false);
        self.m_upowerPercent = properties.percentage.value_or(-1.0);
        self.m_upowerActive = true;
        self.m_reason.clear();
        self.publish();
    });
}

int PowerWatch::onUpowerChanged(sd_bus_message* signal, void* userdata, sd_bus_error*) noexcept {
    return guarded(userdata, [signal](PowerWatch& self) {
        const Properties properties = readPropertiesChanged(signal);
        if (properties.invalidated) {
            self.askUpower(); // named without a value: read them all again
            return;
        }
        self.m_upowerOnBattery = properties.onBattery.value_or(self.m_upowerOnBattery);
        self.m_displayPresent = properties.isPresent.value_or(self.m_displayPresent);
        self.m_upowerPercent = properties.percentage.value_or(self.m_upowerPercent);
        self.publish();
    });
}

int PowerWatch::onUpowerOwner(sd_bus_message* signal, void* userdata, sd_bus_error*) noexcept {
    return guarded(userdata, [signal](PowerWatch& self) {
        if (newOwner(signal).empty()) {
            self.fallBack("UPower left the system bus");
        } else {
            self.askUpower(); // back (or replaced): UPower again once it answers
        }
    });
}

int PowerWatch::onProfiles(sd_bus_message* message, void* userdata, sd_bus_error*) noexcept {
    auto* service = static_cast<ProfilesService*>(userdata);
    return guarded(service->owner, [message, service](PowerWatch& self) {
        Properties properties;
        if (sd_bus_message_is_signal(message, kProperties, "PropertiesChanged") > 0) {
            properties = readPropertiesChanged(message);
            if (properties.invalidated) {
                self.askProfiles(*service);
                return;
            }
        } else if (sd_bus_message_get_error(message) != nullptr) {
            service->call.reset();
            properties.activeProfile = ""; // not there (or not answering): no power saving from it
        } else {
            service->call.reset();
            MessageReader in(message);
            readDictionary(in, properties);
        }
        if (properties.activeProfile) {
            service->powerSaver = *properties.activeProfile == "power-saver";
            self.publish();
        }
    });
}

int PowerWatch::onProfilesOwner(sd_bus_message* signal, void* userdata, sd_bus_error*) noexcept {
    auto* service = static_cast<ProfilesService*>(userdata);
    return guarded(service->owner, [signal, service](PowerWatch& self) {
        if (newOwner(signal).empty()) {
            service->call.reset();
            service->powerSaver = false;
            self.publish();
        } else {
            self.askProfiles(*service);
        }
    });
}

int PowerWatch::onDisconnected(sd_bus_message* message, void* userdata, sd_bus_error*) noexcept {
    if (sd_bus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") <= 0) {
        return 0; // a filter sees every message: this one is for the matches and calls
    }
    return guarded(userdata, [](PowerWatch& self) {
        // The connection is left to poll(), which opens a new one: it is still in sd-bus's hands here.
        for (auto& service : self.m_profiles) {
            service->powerSaver = false;
        }
        self.fallBack("the system bus closed");
    });
}

} // namespace nicer::desktop
