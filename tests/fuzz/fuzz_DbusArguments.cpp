// What nicerd's D-Bus methods take from any client on the session bus, checked without sd-bus:
//   - SetParameters' a{sv} (dbus/wire/ParameterArguments): entries of known and unknown names, of the
//     right and wrong types, in order. What is accepted validates and holds each parameter at the last value
//     sent for it; every valid ControllerParams, sent as the service publishes it, comes back unchanged.
//   - BoincAttach, BoincAttachAccountManager and BoincDetach (daemon/BoincArguments): arguments that pass
//     go into a GUI RPC request (xmlEscape, frameRequest) that BOINC reads as exactly one request, holding
//     each argument as it was sent.
//   - SetWorkloadPreset: an id the service accepts (WorkloadChooser::known) is saved so that it reads back.
// Strings are what D-Bus can carry: valid UTF-8 without NUL; others never reach the service.

#include "FuzzSupport.h"
#include "boinc/GuiRpcProtocol.h"
#include "control/ParameterTable.h"
#include "daemon/BoincArguments.h"
#include "dbus/wire/ParameterArguments.h"
#include "workload/PresetFile.h"
#include "workload/WorkloadChooser.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cmath>
#include <fuzzer/FuzzedDataProvider.h>
#include <map>
#include <string>
#include <vector>

using namespace nicer;

namespace {

/// Whether sd-bus would carry @p text as a D-Bus string: valid UTF-8, no NUL.
bool dbusString(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        std::size_t length = 0;
        std::uint32_t code = 0;
        if (lead == 0) {
            return false;
        }
        if (lead < 0x80) {
            length = 1;
            code = lead;
        } else if ((lead & 0xe0) == 0xc0) {
            length = 2;
            code = lead & 0x1fu;
        } else if ((lead & 0xf0) == 0xe0) {
            length = 3;
            code = lead & 0x0fu;
        } else if ((lead & 0xf8) == 0xf0) {
            length = 4;
            code = lead & 0x07u;
        } else {
            return false;
        }
        if (i + length > text.size()) {
            return false;
        }
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xc0) != 0x80) {
                return false;
            }
            code = (code << 6) | (next & 0x3fu);
        }
        const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
            return false;
        }
        i += length;
    }
    return true;
}

std::string busString(FuzzedDataProvider& input, std::size_t maxLength) {
    return input.ConsumeRandomLengthString(maxLength);
}

// --- SetParameters
// -------------------------------------------------------------------------------------------

dbus::ParameterArgument argumentFor(const control::ParameterInfo& info, const control::ControllerParams& p) {
    // As the service publishes a parameter (codec::appendParameter): the text unit times busScale, or text.
    if (info.type == control::ParameterType::Hours) {
        return {info.busName, info.getText(p)};
    }
    const double v = info.get(p) * info.busScale;
    switch (info.busSignature[0]) {
    case 'u':
        return {info.busName, static_cast<std::uint32_t>(std::llround(v))};
    case 't':
        return {info.busName, static_cast<std::uint64_t>(std::llround(v))};
    default:
        return {info.busName, v};
    }
}

void fuzzSetParameters(FuzzedDataProvider& input) {
    const auto table = control::parameterTable();
    std::vector<dbus::ParameterArgument> arguments;
    const std::size_t count = input.ConsumeIntegralInRange<std::size_t>(0, 8);
    for (std::size_t i = 0; i < count && input.remaining_bytes() > 0; ++i) {
        dbus::ParameterArgument argument;
        argument.key =
            input.ConsumeBool()
                ? std::string(table[input.ConsumeIntegralInRange<std::size_t>(0, table.size() - 1)].busName)
                : busString(input, 24);
        if (!dbusString(argument.key)) {
            return;
        }
        switch (input.ConsumeIntegralInRange(0, 5)) {
        case 0:
            argument.value = input.ConsumeFloatingPoint<double>();
            break;
        case 1:
            argument.value = input.ConsumeProbability<double>() * 1.2 - 0.1;
            break;
        case 2:
            argument.value = input.ConsumeIntegral<std::uint32_t>();
            break;
        case 3:
            argument.value = input.ConsumeBool()
                                 ? input.ConsumeIntegral<std::uint64_t>()
                                 : input.ConsumeIntegralInRange<std::uint64_t>(0, 12'000) * 1000;
            break;
        case 4:
            argument.value = busString(input, 48);
            if (!dbusString(std::get<std::string>(argument.value))) {
                return;
            }
            break;
        default:
            argument.value = dbus::OtherType{std::string(1, "ibxyaov("[input.ConsumeIntegralInRange(0, 7)])};
            break;
        }
        arguments.push_back(std::move(argument));
    }

    const control::ControllerParams current;
    const auto applied = dbus::applyParameterArguments(current, arguments);
    if (applied) {
        FUZZ_CHECK(control::validate(*applied).ok());
        // Every entry named a parameter, in its D-Bus type; each parameter holds the last value sent for it.
        std::map<std::string, const dbus::ParameterArgument*> last;
        for (const auto& argument : arguments) {
            const control::ParameterInfo* info = control::findBusParameter(argument.key);
            FUZZ_CHECK(info != nullptr);
            FUZZ_CHECK(!std::holds_alternative<dbus::OtherType>(argument.value));
            last[argument.key] = &argument;
        }
        for (const auto& info : table) {
            const auto it = last.find(info.busName);
            if (it == last.end()) {
                FUZZ_CHECK(control::sameValue(info, *applied, current));
                continue;
            }
            control::ControllerParams one = current;
            dbus::BusValue value;
            std::visit(
                [&](const auto& held) {
                    if constexpr (!std::is_same_v<std::decay_t<decltype(held)>, dbus::OtherType>) {
                        value = held;
                    }
                },
                it->second->value);
            FUZZ_CHECK(dbus::setParameterFromBus(info, value, one).ok());
            FUZZ_CHECK(control::sameValue(info, *applied, one));
        }
    } else {
        FUZZ_CHECK(!applied.error().message.empty());
    }

    // What the service publishes, sent back, sets the same parameters (GetAll, then SetParameters).
    if (applied) {
        std::vector<dbus::ParameterArgument> published;
        for (const auto& info : table) {
            published.push_back(argumentFor(info, *applied));
        }
        const auto again = dbus::applyParameterArguments(control::ControllerParams{}, published);
        FUZZ_CHECK(again.ok());
        FUZZ_CHECK(*again == *applied);
    }
}

// --- BOINC's attach and detach
// -------------------------------------------------------------------------------

/// The request BoincRpc makes of @p fields (element name and value, each value escaped with xmlEscape):
/// BOINC reads up to the first \003, so there must be exactly one, at the end, and the XML before it must
/// give back every value as it was sent.
void checkRequest(const char* op, const std::vector<std::pair<const char*, std::string>>& fields) {
    std::string body = std::string("<") + op + ">\n";
    for (const auto& [name, value] : fields) {
        body += std::string("  <") + name + ">" + boinc::xmlEscape(value) + "</" + name + ">\n";
    }
    body += std::string("</") + op + ">\n";
    const std::string request = boinc::frameRequest(body);
    FUZZ_CHECK(request.find(boinc::kEndOfMessage) == request.size() - 1);
    pugi::xml_document document;
    const auto parsed = document.load_buffer(
        request.data(), request.size() - 1, pugi::parse_default | pugi::parse_ws_pcdata, pugi::encoding_utf8);
    FUZZ_CHECK(parsed);
    const pugi::xml_node element = document.child("boinc_gui_rpc_request").child(op);
    FUZZ_CHECK(element);
    for (const auto& [name, value] : fields) {
        FUZZ_CHECK(std::string(element.child(name).child_value()) == value);
    }
}

void fuzzBoinc(FuzzedDataProvider& input) {
    const std::string url = input.ConsumeBool() ? "https://" + busString(input, 300) : busString(input, 300);
    const std::string second = busString(input, 300);
    const std::string third = busString(input, 300);
    if (!dbusString(url) || !dbusString(second) || !dbusString(third)) {
        return;
    }
    if (daemon::checkBoincProjectUrl(url)) {
        FUZZ_CHECK(url.starts_with("http://") || url.starts_with("https://"));
        FUZZ_CHECK(url.size() <= 255);
        checkRequest("project_detach", {{"project_url", url}});
    }
    if (daemon::checkBoincAttach(url, second)) {
        FUZZ_CHECK(daemon::checkBoincProjectUrl(url).ok());
        checkRequest("project_attach",
                     {{"project_url", url}, {"authenticator", second}, {"project_name", ""}});
    }
    if (daemon::checkBoincAccountManager(url, second, third)) {
        FUZZ_CHECK(daemon::checkBoincProjectUrl(url).ok());
        checkRequest("acct_mgr_rpc", {{"url", url}, {"name", second}, {"password", third}});
    }
}

// --- SetWorkloadPreset
// ---------------------------------------------------------------------------------------

void fuzzWorkloadPreset(FuzzedDataProvider& input) {
    const std::string id = input.ConsumeRemainingBytesAsString();
    if (!dbusString(id) || !workload::WorkloadChooser::known(id)) {
        return;
    }
    const auto saved = workload::readPresetFile(workload::writePresetFile(id), "workload.conf");
    FUZZ_CHECK(saved.ok() && *saved == id);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    switch (input.ConsumeIntegralInRange(0, 2)) {
    case 0:
        fuzzSetParameters(input);
        break;
    case 1:
        fuzzBoinc(input);
        break;
    default:
        fuzzWorkloadPreset(input);
        break;
    }
    return 0;
}
