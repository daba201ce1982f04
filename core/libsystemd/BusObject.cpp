#include "libsystemd/BusObject.h"

#include "libsystemd/Guard.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace nicer::libsystemd {

namespace {

constexpr const char* kFailed = "org.freedesktop.DBus.Error.Failed";

std::uint64_t propertyFlags(PropertyChanges changes) {
    switch (changes) {
    case PropertyChanges::Constant:
        return SD_BUS_VTABLE_PROPERTY_CONST;
    case PropertyChanges::Announced:
        return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE;
    case PropertyChanges::Read:
        break;
    }
    return 0;
}

/// Runs @p handler through the one guard: what it throws becomes the D-Bus error kFailed with its text.
template <typename Handler, typename... Args>
int runGuarded(const Handler& handler, sd_bus_error* error, Args... args) noexcept {
    int result = 0;
    detail::guarded(
        [&](std::string_view what) { result = sd_bus_error_set(error, kFailed, std::string(what).c_str()); },
        [&] { result = handler(args..., error); });
    return result;
}

template <typename Member>
const Member* findByName(const std::vector<Member>& members, const char* name) {
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const Member& m) { return name != nullptr && m.name == name; });
    return it == members.end() ? nullptr : &*it;
}

} // namespace

BusObject::BusObject(BusInterface members)
    : m_members(std::move(members)) {
    m_vtable.push_back(SD_BUS_VTABLE_START(0));
    for (const auto& property : m_members.properties) {
        m_vtable.push_back(SD_BUS_PROPERTY(property.name.c_str(), property.signature.c_str(), &runGetter, 0,
                                           propertyFlags(property.changes)));
    }
    for (const auto& method : m_members.methods) {
        m_vtable.push_back(SD_BUS_METHOD(method.name.c_str(), method.in.c_str(), method.out.c_str(),
                                         &runMethod, SD_BUS_VTABLE_UNPRIVILEGED));
    }
    for (const auto& signal : m_members.busSignals) {
        m_vtable.push_back(SD_BUS_SIGNAL(signal.name.c_str(), signal.signature.c_str(), 0));
    }
    m_vtable.push_back(SD_BUS_VTABLE_END);
}

Result<std::unique_ptr<BusObject>> BusObject::publish(sd_bus* bus, const std::string& path,
                                                      const std::string& interface, BusInterface members) {
    auto object = std::unique_ptr<BusObject>(new BusObject(std::move(members)));
    sd_bus_slot* slot = nullptr;
    if (const int r = sd_bus_add_object_vtable(bus, &slot, path.c_str(), interface.c_str(),
                                               object->m_vtable.data(), object.get());
        r < 0) {
        return busError("cannot publish " + interface + " at " + path, r);
    }
    object->m_slot.reset(slot);
    return object;
}

int BusObject::runGetter(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply,
                         void* userdata, sd_bus_error* error) noexcept {
    const auto* found = findByName(static_cast<BusObject*>(userdata)->m_members.properties, property);
    if (found == nullptr) { // sd-bus calls only for the vtable's names
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s", property);
    }
    return runGuarded(found->get, error, reply);
}

int BusObject::runMethod(sd_bus_message* call, void* userdata, sd_bus_error* error) noexcept {
    const char* member = sd_bus_message_get_member(call);
    const auto* found = findByName(static_cast<BusObject*>(userdata)->m_members.methods, member);
    if (found == nullptr) {
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_METHOD, "no method %s", member);
    }
    return runGuarded(found->handler, error, call);
}

} // namespace nicer::libsystemd
