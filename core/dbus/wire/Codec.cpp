#include "dbus/wire/Codec.h"

#include "libsystemd/Message.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace nicer::dbus::codec {

int appendValue(sd_bus_message* m, bool value) {
    const int b = value ? 1 : 0;
    return sd_bus_message_append_basic(m, 'b', &b);
}
int appendValue(sd_bus_message* m, std::uint32_t value) {
    return sd_bus_message_append_basic(m, 'u', &value);
}
int appendValue(sd_bus_message* m, std::uint64_t value) {
    return sd_bus_message_append_basic(m, 't', &value);
}
int appendValue(sd_bus_message* m, std::int64_t value) {
    return sd_bus_message_append_basic(m, 'x', &value);
}
int appendValue(sd_bus_message* m, double value) {
    return sd_bus_message_append_basic(m, 'd', &value);
}
int appendValue(sd_bus_message* m, const std::string& value) {
    return sd_bus_message_append_basic(m, 's', value.c_str());
}
int appendValue(sd_bus_message* m, const std::optional<std::int64_t>& value) {
    return appendValue(m, value.value_or(-1));
}

int readValue(sd_bus_message* m, bool& value) {
    int b = 0;
    const int r = sd_bus_message_read_basic(m, 'b', &b);
    if (r > 0) {
        value = b != 0;
    }
    return r;
}
int readValue(sd_bus_message* m, std::uint32_t& value) {
    return sd_bus_message_read_basic(m, 'u', &value);
}
int readValue(sd_bus_message* m, std::uint64_t& value) {
    return sd_bus_message_read_basic(m, 't', &value);
}
int readValue(sd_bus_message* m, std::int64_t& value) {
    return sd_bus_message_read_basic(m, 'x', &value);
}
int readValue(sd_bus_message* m, double& value) {
    return sd_bus_message_read_basic(m, 'd', &value);
}
int readValue(sd_bus_message* m, std::string& value) {
    const char* text = nullptr;
    const int r = sd_bus_message_read_basic(m, 's', &text);
    if (r > 0) {
        value = text;
    }
    return r;
}
int readValue(sd_bus_message* m, std::optional<std::int64_t>& value) {
    std::int64_t x = -1;
    const int r = readValue(m, x);
    if (r > 0) {
        value = x >= 0 ? std::optional<std::int64_t>(x) : std::nullopt;
    }
    return r;
}

int appendParameter(sd_bus_message* m, const control::ParameterInfo& info,
                    const control::ControllerParams& p) {
    if (info.type == control::ParameterType::Hours) {
        return sd_bus_message_append(m, "s", info.getText(p).c_str());
    }
    const double v = info.get(p) * info.busScale;
    switch (info.busSignature[0]) {
    case 'u':
        return sd_bus_message_append(m, "u", static_cast<std::uint32_t>(std::llround(v)));
    case 't':
        return sd_bus_message_append(m, "t", static_cast<std::uint64_t>(std::llround(v)));
    default:
        return sd_bus_message_append(m, "d", v);
    }
}

int readParameterVariant(sd_bus_message* m, const control::ParameterInfo& info, control::ControllerParams& p,
                         std::string& error) {
    BusValue value;
    int r = 0;
    switch (info.busSignature[0]) {
    case 's': {
        const char* s = nullptr;
        r = sd_bus_message_read(m, "v", "s", &s);
        value = std::string(s != nullptr ? s : "");
        break;
    }
    case 'u': {
        std::uint32_t u = 0;
        r = sd_bus_message_read(m, "v", "u", &u);
        value = u;
        break;
    }
    case 't': {
        std::uint64_t t = 0;
        r = sd_bus_message_read(m, "v", "t", &t);
        value = t;
        break;
    }
    default: {
        double d = 0;
        r = sd_bus_message_read(m, "v", "d", &d);
        value = d;
        break;
    }
    }
    if (r < 0) {
        error =
            std::string("parameter ") + info.busName + " has the wrong type: it must be " + info.busSignature;
        return r;
    }
    if (auto set = setParameterFromBus(info, value, p); !set) {
        error = set.error().message;
        return -EINVAL;
    }
    return r;
}

namespace {

/// One variant of SetParameters' a{sv}, read as the type it holds, so that the check can say which type it
/// should have been: d, u, t or s; another type is skipped and kept as its signature.
void readArgumentValue(libsystemd::MessageReader& in, ParameterArgument& argument) {
    const char* contents = nullptr;
    in.peekType(nullptr, &contents);
    const std::string held = contents != nullptr ? contents : "";
    if (held == "d") {
        double d = 0;
        in.read("v", "d", &d);
        argument.value = d;
    } else if (held == "u") {
        std::uint32_t u = 0;
        in.read("v", "u", &u);
        argument.value = u;
    } else if (held == "t") {
        std::uint64_t t = 0;
        in.read("v", "t", &t);
        argument.value = t;
    } else if (held == "s") {
        const char* s = nullptr;
        in.read("v", "s", &s);
        argument.value = std::string(s != nullptr ? s : "");
    } else {
        argument.value = OtherType{held};
        in.skip("v");
    }
}

} // namespace

int readParameterArguments(sd_bus_message* m, std::vector<ParameterArgument>& arguments) {
    libsystemd::MessageReader in(m);
    in.enter('a', "{sv}");
    while (in.enter('e', "sv")) {
        ParameterArgument argument;
        const char* key = nullptr;
        if (in.read("s", &key)) {
            argument.key = key;
            readArgumentValue(in, argument);
        }
        in.exit();
        if (in.ok()) {
            arguments.push_back(std::move(argument));
        }
    }
    in.exit();
    return in.result();
}

int appendParameters(sd_bus_message* m, const control::ControllerParams& p) {
    libsystemd::MessageWriter out(m);
    out.open('a', "{sv}");
    for (const auto& info : control::parameterTable()) {
        out.open('e', "sv").append("s", info.busName).open('v', info.busSignature);
        out.run([&] { return appendParameter(m, info, p); });
        out.close().close();
    }
    out.close();
    return out.result();
}

int appendProperty(sd_bus_message* m, const api::PropertyInfo& property, const api::DaemonState& state) {
    return std::visit(
        [&](const auto& field) {
            if constexpr (std::is_same_v<std::decay_t<decltype(field)>, const control::ParameterInfo*>) {
                return appendParameter(m, *field, state.params);
            } else {
                return appendValue(m, api::valueOf(field, state));
            }
        },
        property.field);
}

int readPropertyVariant(sd_bus_message* m, const api::PropertyInfo& property, api::DaemonState& state) {
    if (const auto* const* parameter = std::get_if<const control::ParameterInfo*>(&property.field)) {
        std::string problem; // a value that cannot be stored fails the read
        return readParameterVariant(m, **parameter, state.params, problem);
    }
    const std::string signature = api::signatureOf(property);
    libsystemd::MessageReader in(m);
    const char* contents = nullptr;
    in.peekType(nullptr, &contents);
    if (!in.ok()) {
        return in.result();
    }
    if (contents == nullptr || signature != contents) {
        in.skip("v");
        return in.result();
    }
    in.enter('v', signature.c_str());
    in.run([&] {
        return std::visit(
            [&](const auto& field) {
                if constexpr (std::is_same_v<std::decay_t<decltype(field)>, const control::ParameterInfo*>) {
                    return -EINVAL; // read above
                } else {
                    return readValue(m, field(state));
                }
            },
            property.field);
    });
    in.exit();
    return in.result();
}

} // namespace nicer::dbus::codec
