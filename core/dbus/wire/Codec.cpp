#include "dbus/wire/Codec.h"

#include "api/BusNames.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace nicer::dbus::codec {

namespace {

/// Runs @p body inside a struct container of signature @p fields; 0 at the end of an array when reading.
template <typename Body>
int inStruct(sd_bus_message* m, bool reading, const char* fields, Body&& body) {
    int r = reading ? sd_bus_message_enter_container(m, 'r', fields)
                    : sd_bus_message_open_container(m, 'r', fields);
    if (r <= 0 && reading) {
        return r;
    }
    if (r >= 0) {
        r = body();
    }
    if (r >= 0) {
        r = reading ? sd_bus_message_exit_container(m) : sd_bus_message_close_container(m);
    }
    return r < 0 ? r : 1;
}

} // namespace

int appendSampleFields(sd_bus_message* m, const api::Sample& s) {
    return sd_bus_message_append(m, api::kSampleSignature, s.timeUSec, s.idle, s.foreground, s.background,
                                 s.outside, s.quota, s.multiplier, s.overloadCount,
                                 static_cast<int>(s.paused), static_cast<int>(s.outsideSignal));
}

int append(sd_bus_message* m, const api::Sample& s) {
    return inStruct(m, false, api::kSampleSignature, [&] { return appendSampleFields(m, s); });
}

int read(sd_bus_message* m, api::Sample& s) {
    return inStruct(m, true, api::kSampleSignature, [&] {
        int paused = 0;
        int outsideSignal = 0;
        const int r = sd_bus_message_read(m, api::kSampleSignature, &s.timeUSec, &s.idle, &s.foreground,
                                          &s.background, &s.outside, &s.quota, &s.multiplier,
                                          &s.overloadCount, &paused, &outsideSignal);
        s.paused = paused != 0;
        s.outsideSignal = outsideSignal != 0;
        return r;
    });
}

int append(sd_bus_message* m, const api::DownloadEntry& e) {
    return inStruct(m, false, api::kDownloadSignature, [&] {
        const std::string state(api::downloadStateKeyword(e.state));
        return sd_bus_message_append(m, api::kDownloadSignature, e.name.c_str(), e.bytesDone, e.bytesTotal,
                                     e.rate, state.c_str(), static_cast<int>(e.verified), e.reason.c_str(),
                                     static_cast<std::int64_t>(e.retryInSeconds.value_or(-1)));
    });
}

int read(sd_bus_message* m, api::DownloadEntry& e) {
    return inStruct(m, true, api::kDownloadSignature, [&] {
        const char *name = nullptr, *state = nullptr, *reason = nullptr;
        int verified = 0;
        std::int64_t retryIn = -1;
        const int r = sd_bus_message_read(m, api::kDownloadSignature, &name, &e.bytesDone, &e.bytesTotal,
                                          &e.rate, &state, &verified, &reason, &retryIn);
        if (r < 0) {
            return r;
        }
        e.name = name;
        // A state this client does not know yet (a newer nicerd's) shows as queued: it changes soon.
        e.state = api::downloadStateFromKeyword(state).value_or(api::DownloadState::Queued);
        e.verified = verified != 0;
        e.reason = reason;
        e.retryInSeconds = retryIn >= 0 ? std::optional<std::int64_t>(retryIn) : std::nullopt;
        return r;
    });
}

int append(sd_bus_message* m, const api::PresetInfo& p) {
    return inStruct(m, false, api::kPresetSignature, [&] {
        return sd_bus_message_append(m, api::kPresetSignature, p.id.c_str(), p.name.c_str(),
                                     p.description.c_str(), static_cast<int>(p.available));
    });
}

int read(sd_bus_message* m, api::PresetInfo& p) {
    return inStruct(m, true, api::kPresetSignature, [&] {
        const char *id = nullptr, *name = nullptr, *description = nullptr;
        int available = 0;
        const int r = sd_bus_message_read(m, api::kPresetSignature, &id, &name, &description, &available);
        if (r >= 0) {
            p = {id, name, description, available != 0};
        }
        return r;
    });
}

int append(sd_bus_message* m, const api::BoincProject& p) {
    return inStruct(m, false, api::kBoincProjectSignature, [&] {
        return sd_bus_message_append(m, api::kBoincProjectSignature, p.url.c_str(), p.name.c_str(),
                                     p.userCredit, p.hostCredit, p.recentCredit,
                                     static_cast<int>(p.suspended), static_cast<int>(p.noMoreWork),
                                     static_cast<int>(p.viaAccountManager));
    });
}

int read(sd_bus_message* m, api::BoincProject& p) {
    return inStruct(m, true, api::kBoincProjectSignature, [&] {
        const char *url = nullptr, *name = nullptr;
        int suspended = 0, noMoreWork = 0, viaAccountManager = 0;
        const int r =
            sd_bus_message_read(m, api::kBoincProjectSignature, &url, &name, &p.userCredit, &p.hostCredit,
                                &p.recentCredit, &suspended, &noMoreWork, &viaAccountManager);
        if (r >= 0) {
            p.url = url;
            p.name = name;
            p.suspended = suspended != 0;
            p.noMoreWork = noMoreWork != 0;
            p.viaAccountManager = viaAccountManager != 0;
        }
        return r;
    });
}

int append(sd_bus_message* m, const api::BoincTask& t) {
    return inStruct(m, false, api::kBoincTaskSignature, [&] {
        return sd_bus_message_append(m, api::kBoincTaskSignature, t.name.c_str(), t.projectUrl.c_str(),
                                     t.state.c_str(), t.fractionDone, t.elapsedSeconds, t.remainingSeconds,
                                     t.deadline);
    });
}

int read(sd_bus_message* m, api::BoincTask& t) {
    return inStruct(m, true, api::kBoincTaskSignature, [&] {
        const char *name = nullptr, *url = nullptr, *state = nullptr;
        const int r = sd_bus_message_read(m, api::kBoincTaskSignature, &name, &url, &state, &t.fractionDone,
                                          &t.elapsedSeconds, &t.remainingSeconds, &t.deadline);
        if (r >= 0) {
            t.name = name;
            t.projectUrl = url;
            t.state = state;
        }
        return r;
    });
}

int append(sd_bus_message* m, const api::BoincTransfer& t) {
    return inStruct(m, false, api::kBoincTransferSignature, [&] {
        return sd_bus_message_append(m, api::kBoincTransferSignature, t.name.c_str(), t.projectUrl.c_str(),
                                     static_cast<int>(t.upload), t.bytesTotal, t.bytesDone, t.rate,
                                     t.state.c_str());
    });
}

int read(sd_bus_message* m, api::BoincTransfer& t) {
    return inStruct(m, true, api::kBoincTransferSignature, [&] {
        const char *name = nullptr, *url = nullptr, *state = nullptr;
        int upload = 0;
        const int r = sd_bus_message_read(m, api::kBoincTransferSignature, &name, &url, &upload,
                                          &t.bytesTotal, &t.bytesDone, &t.rate, &state);
        if (r >= 0) {
            t.name = name;
            t.projectUrl = url;
            t.upload = upload != 0;
            t.state = state;
        }
        return r;
    });
}

int append(sd_bus_message* m, const api::BoincNotice& n) {
    return inStruct(m, false, api::kBoincNoticeSignature, [&] {
        return sd_bus_message_append(m, api::kBoincNoticeSignature, n.seqno, n.time, n.project.c_str(),
                                     n.title.c_str(), n.text.c_str(), static_cast<int>(n.error));
    });
}

int read(sd_bus_message* m, api::BoincNotice& n) {
    return inStruct(m, true, api::kBoincNoticeSignature, [&] {
        const char *project = nullptr, *title = nullptr, *text = nullptr;
        int error = 0;
        const int r = sd_bus_message_read(m, api::kBoincNoticeSignature, &n.seqno, &n.time, &project, &title,
                                          &text, &error);
        if (r >= 0) {
            n.project = project;
            n.title = title;
            n.text = text;
            n.error = error != 0;
        }
        return r;
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

int readParameterArguments(sd_bus_message* m, std::vector<ParameterArgument>& arguments) {
    int r = sd_bus_message_enter_container(m, 'a', "{sv}");
    while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        ParameterArgument argument;
        const char* key = nullptr;
        const char* contents = nullptr;
        r = sd_bus_message_read(m, "s", &key);
        if (r >= 0) {
            argument.key = key;
            r = sd_bus_message_peek_type(m, nullptr, &contents);
        }
        if (r >= 0) {
            // Read as the type the variant holds, so that the check can say which type it should have been.
            const std::string held = contents != nullptr ? contents : "";
            if (held == "d") {
                double d = 0;
                r = sd_bus_message_read(m, "v", "d", &d);
                argument.value = d;
            } else if (held == "u") {
                std::uint32_t u = 0;
                r = sd_bus_message_read(m, "v", "u", &u);
                argument.value = u;
            } else if (held == "t") {
                std::uint64_t t = 0;
                r = sd_bus_message_read(m, "v", "t", &t);
                argument.value = t;
            } else {
                argument.value = held;
                r = sd_bus_message_skip(m, "v");
            }
        }
        if (r >= 0) {
            r = sd_bus_message_exit_container(m);
        }
        if (r >= 0) {
            arguments.push_back(std::move(argument));
        }
    }
    return r < 0 ? r : sd_bus_message_exit_container(m);
}

int appendParameters(sd_bus_message* m, const control::ControllerParams& p) {
    int r = sd_bus_message_open_container(m, 'a', "{sv}");
    for (const auto& info : control::parameterTable()) {
        if (r >= 0) {
            r = sd_bus_message_open_container(m, 'e', "sv");
        }
        if (r >= 0) {
            r = sd_bus_message_append(m, "s", info.busName);
        }
        if (r >= 0) {
            r = sd_bus_message_open_container(m, 'v', info.busSignature);
        }
        if (r >= 0) {
            r = appendParameter(m, info, p);
        }
        if (r >= 0) {
            r = sd_bus_message_close_container(m);
        }
        if (r >= 0) {
            r = sd_bus_message_close_container(m);
        }
    }
    return r < 0 ? r : sd_bus_message_close_container(m);
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
int appendValue(sd_bus_message* m, const std::vector<std::string>& values) {
    int r = sd_bus_message_open_container(m, 'a', "s");
    for (const auto& value : values) {
        if (r >= 0) {
            r = sd_bus_message_append(m, "s", value.c_str());
        }
    }
    return r < 0 ? r : sd_bus_message_close_container(m);
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
int readValue(sd_bus_message* m, std::vector<std::string>& values) {
    values.clear();
    int r = sd_bus_message_enter_container(m, 'a', "s");
    while (r > 0) {
        std::string value;
        if ((r = readValue(m, value)) > 0) {
            values.push_back(std::move(value));
        }
    }
    return r < 0 ? r : sd_bus_message_exit_container(m);
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
    const char* contents = nullptr;
    if (int r = sd_bus_message_peek_type(m, nullptr, &contents); r < 0) {
        return r;
    }
    if (contents == nullptr || signature != contents) {
        return sd_bus_message_skip(m, "v");
    }
    int r = sd_bus_message_enter_container(m, 'v', signature.c_str());
    if (r >= 0) {
        r = std::visit(
            [&](const auto& field) {
                if constexpr (std::is_same_v<std::decay_t<decltype(field)>, const control::ParameterInfo*>) {
                    return -EINVAL; // read above
                } else {
                    return readValue(m, field(state));
                }
            },
            property.field);
    }
    return r < 0 ? r : sd_bus_message_exit_container(m);
}

} // namespace nicer::dbus::codec
