#include "dbus/wire/Codec.h"

#include "api/BusNames.h"
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

namespace {

/// Appends a struct of signature @p fields, whose fields @p body appends to the writer it is given; 1 when
/// it is written.
template <typename Body>
int appendStruct(sd_bus_message* m, const char* fields, Body&& body) {
    libsystemd::MessageWriter out(m);
    out.open('r', fields);
    std::forward<Body>(body)(out);
    out.close();
    return out.ok() ? 1 : out.result();
}

/// Reads a struct of signature @p fields, whose fields @p body reads from the reader it is given: 1 when it
/// was read, 0 at the end of the array that holds it.
template <typename Body>
int readStruct(sd_bus_message* m, const char* fields, Body&& body) {
    libsystemd::MessageReader in(m);
    if (!in.enter('r', fields)) {
        return in.result();
    }
    std::forward<Body>(body)(in);
    in.exit();
    return in.ok() ? 1 : in.result();
}

} // namespace

int appendSampleFields(sd_bus_message* m, const api::Sample& s) {
    return sd_bus_message_append(m, api::kSampleSignature, s.timeUSec, s.idle, s.foreground, s.background,
                                 s.outside, s.quota, s.multiplier, s.overloadCount,
                                 static_cast<int>(s.paused), static_cast<int>(s.outsideSignal), s.temperature,
                                 s.heldBy.c_str());
}

int readSampleFields(sd_bus_message* m, api::Sample& s) {
    libsystemd::MessageReader in(m);
    int paused = 0;
    int outsideSignal = 0;
    const char* heldBy = nullptr;
    in.read(api::kSampleSignature, &s.timeUSec, &s.idle, &s.foreground, &s.background, &s.outside, &s.quota,
            &s.multiplier, &s.overloadCount, &paused, &outsideSignal, &s.temperature, &heldBy);
    if (in.ok()) {
        s.paused = paused != 0;
        s.outsideSignal = outsideSignal != 0;
        s.heldBy = heldBy;
    }
    return in.result();
}

int append(sd_bus_message* m, const api::Sample& s) {
    return appendStruct(m, api::kSampleSignature, [&](libsystemd::MessageWriter& out) {
        out.run([&] { return appendSampleFields(m, s); });
    });
}

int read(sd_bus_message* m, api::Sample& s) {
    return readStruct(m, api::kSampleSignature,
                      [&](libsystemd::MessageReader& in) { in.run([&] { return readSampleFields(m, s); }); });
}

int append(sd_bus_message* m, const api::DownloadEntry& e) {
    return appendStruct(m, api::kDownloadSignature, [&](libsystemd::MessageWriter& out) {
        const std::string state(api::downloadStateKeyword(e.state));
        out.append(api::kDownloadSignature, e.name.c_str(), e.bytesDone, e.bytesTotal, e.rate, state.c_str(),
                   static_cast<int>(e.verified), e.reason.c_str(),
                   static_cast<std::int64_t>(e.retryInSeconds.value_or(-1)));
    });
}

int read(sd_bus_message* m, api::DownloadEntry& e) {
    return readStruct(m, api::kDownloadSignature, [&](libsystemd::MessageReader& in) {
        const char *name = nullptr, *state = nullptr, *reason = nullptr;
        int verified = 0;
        std::int64_t retryIn = -1;
        if (!in.read(api::kDownloadSignature, &name, &e.bytesDone, &e.bytesTotal, &e.rate, &state, &verified,
                     &reason, &retryIn)) {
            return;
        }
        e.name = name;
        // A state this client does not know yet (a newer nicerd's) shows as queued: it changes soon.
        e.state = api::downloadStateFromKeyword(state).value_or(api::DownloadState::Queued);
        e.verified = verified != 0;
        e.reason = reason;
        e.retryInSeconds = retryIn >= 0 ? std::optional<std::int64_t>(retryIn) : std::nullopt;
    });
}

int append(sd_bus_message* m, const api::PresetInfo& p) {
    return appendStruct(m, api::kPresetSignature, [&](libsystemd::MessageWriter& out) {
        out.append(api::kPresetSignature, p.id.c_str(), p.name.c_str(), p.description.c_str(),
                   static_cast<int>(p.available));
    });
}

int read(sd_bus_message* m, api::PresetInfo& p) {
    return readStruct(m, api::kPresetSignature, [&](libsystemd::MessageReader& in) {
        const char *id = nullptr, *name = nullptr, *description = nullptr;
        int available = 0;
        if (in.read(api::kPresetSignature, &id, &name, &description, &available)) {
            p = {id, name, description, available != 0};
        }
    });
}

int append(sd_bus_message* m, const api::BoincProject& p) {
    return appendStruct(m, api::kBoincProjectSignature, [&](libsystemd::MessageWriter& out) {
        out.append(api::kBoincProjectSignature, p.url.c_str(), p.name.c_str(), p.userCredit, p.hostCredit,
                   p.recentCredit, static_cast<int>(p.suspended), static_cast<int>(p.noMoreWork),
                   static_cast<int>(p.viaAccountManager));
    });
}

int read(sd_bus_message* m, api::BoincProject& p) {
    return readStruct(m, api::kBoincProjectSignature, [&](libsystemd::MessageReader& in) {
        const char *url = nullptr, *name = nullptr;
        int suspended = 0, noMoreWork = 0, viaAccountManager = 0;
        if (in.read(api::kBoincProjectSignature, &url, &name, &p.userCredit, &p.hostCredit, &p.recentCredit,
                    &suspended, &noMoreWork, &viaAccountManager)) {
            p.url = url;
            p.name = name;
            p.suspended = suspended != 0;
            p.noMoreWork = noMoreWork != 0;
            p.viaAccountManager = viaAccountManager != 0;
        }
    });
}

int append(sd_bus_message* m, const api::BoincTask& t) {
    return appendStruct(m, api::kBoincTaskSignature, [&](libsystemd::MessageWriter& out) {
        out.append(api::kBoincTaskSignature, t.name.c_str(), t.projectUrl.c_str(), t.state.c_str(),
                   t.fractionDone, t.elapsedSeconds, t.remainingSeconds, t.deadline, t.cpuSeconds,
                   t.elapsedLimitSeconds);
    });
}

int read(sd_bus_message* m, api::BoincTask& t) {
    return readStruct(m, api::kBoincTaskSignature, [&](libsystemd::MessageReader& in) {
        const char *name = nullptr, *url = nullptr, *state = nullptr;
        if (in.read(api::kBoincTaskSignature, &name, &url, &state, &t.fractionDone, &t.elapsedSeconds,
                    &t.remainingSeconds, &t.deadline, &t.cpuSeconds, &t.elapsedLimitSeconds)) {
            t.name = name;
            t.projectUrl = url;
            t.state = state;
        }
    });
}

int append(sd_bus_message* m, const api::BoincTransfer& t) {
    return appendStruct(m, api::kBoincTransferSignature, [&](libsystemd::MessageWriter& out) {
        out.append(api::kBoincTransferSignature, t.name.c_str(), t.projectUrl.c_str(),
                   static_cast<int>(t.upload), t.bytesTotal, t.bytesDone, t.rate, t.state.c_str());
    });
}

int read(sd_bus_message* m, api::BoincTransfer& t) {
    return readStruct(m, api::kBoincTransferSignature, [&](libsystemd::MessageReader& in) {
        const char *name = nullptr, *url = nullptr, *state = nullptr;
        int upload = 0;
        if (in.read(api::kBoincTransferSignature, &name, &url, &upload, &t.bytesTotal, &t.bytesDone, &t.rate,
                    &state)) {
            t.name = name;
            t.projectUrl = url;
            t.upload = upload != 0;
            t.state = state;
        }
    });
}

int append(sd_bus_message* m, const api::BoincNotice& n) {
    return appendStruct(m, api::kBoincNoticeSignature, [&](libsystemd::MessageWriter& out) {
        out.append(api::kBoincNoticeSignature, n.seqno, n.time, n.project.c_str(), n.title.c_str(),
                   n.text.c_str(), static_cast<int>(n.error));
    });
}

int read(sd_bus_message* m, api::BoincNotice& n) {
    return readStruct(m, api::kBoincNoticeSignature, [&](libsystemd::MessageReader& in) {
        const char *project = nullptr, *title = nullptr, *text = nullptr;
        int error = 0;
        if (in.read(api::kBoincNoticeSignature, &n.seqno, &n.time, &project, &title, &text, &error)) {
            n.project = project;
            n.title = title;
            n.text = text;
            n.error = error != 0;
        }
    });
}

int appendParameter(sd_bus_message* m, const control::ParameterInfo& info,
                    const control::ControllerParams& p) {
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
    BusNumber value;
    int r = 0;
    switch (info.busSignature[0]) {
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
/// should have been: d, u or t; another type is skipped and kept as its signature.
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
    } else {
        argument.value = held;
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

int appendStrings(sd_bus_message* m, const std::vector<std::string>& values) {
    libsystemd::MessageWriter out(m);
    out.open('a', "s");
    for (const auto& value : values) {
        out.append("s", value.c_str());
    }
    out.close();
    return out.result();
}

int readStrings(sd_bus_message* m, std::vector<std::string>& values) {
    values.clear();
    libsystemd::MessageReader in(m);
    if (in.enter('a', "s")) {
        const char* text = nullptr;
        while (in.readBasic('s', &text)) {
            values.emplace_back(text);
        }
        in.exit();
    }
    return in.result();
}

namespace {

int appendValue(sd_bus_message* m, bool value) {
    return sd_bus_message_append(m, "b", static_cast<int>(value));
}
int appendValue(sd_bus_message* m, std::uint32_t value) {
    return sd_bus_message_append(m, "u", value);
}
int appendValue(sd_bus_message* m, std::uint64_t value) {
    return sd_bus_message_append(m, "t", value);
}
int appendValue(sd_bus_message* m, double value) {
    return sd_bus_message_append(m, "d", value);
}
int appendValue(sd_bus_message* m, const std::string& value) {
    return sd_bus_message_append(m, "s", value.c_str());
}
int appendValue(sd_bus_message* m, api::BoincState value) {
    return sd_bus_message_append(m, "s", std::string(api::boincStateKeyword(value)).c_str());
}
int appendValue(sd_bus_message* m, const std::vector<std::string>& values) {
    return appendStrings(m, values);
}
template <typename Struct>
int appendValue(sd_bus_message* m, const std::vector<Struct>& values) {
    return appendArray(m, values);
}

int readValue(sd_bus_message* m, bool& value) {
    int b = 0;
    const int r = sd_bus_message_read_basic(m, 'b', &b);
    value = b != 0;
    return r;
}
int readValue(sd_bus_message* m, std::uint32_t& value) {
    return sd_bus_message_read_basic(m, 'u', &value);
}
int readValue(sd_bus_message* m, std::uint64_t& value) {
    return sd_bus_message_read_basic(m, 't', &value);
}
int readValue(sd_bus_message* m, double& value) {
    return sd_bus_message_read_basic(m, 'd', &value);
}
int readValue(sd_bus_message* m, std::string& value) {
    const char* text = nullptr;
    const int r = sd_bus_message_read_basic(m, 's', &text);
    value = text != nullptr ? text : "";
    return r;
}
int readValue(sd_bus_message* m, api::BoincState& value) {
    std::string keyword;
    const int r = readValue(m, keyword);
    value = api::boincStateFromBus(keyword);
    return r;
}
int readValue(sd_bus_message* m, std::vector<std::string>& values) {
    return readStrings(m, values);
}
template <typename Struct>
int readValue(sd_bus_message* m, std::vector<Struct>& values) {
    values.clear();
    return readArray(m, values);
}

} // namespace

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
