#include "boinc/GlobalPrefsOverride.h"

#include "util/Text.h"

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>
#include <utility>

namespace nicer::boinc {

namespace {

constexpr std::string_view kRoot = "global_preferences";

struct Setting {
    const char* name;
    const char* value; ///< null: the value nicer chooses each time (max_ncpus_pct: the profile's CPUs)
};

// The values nicer needs (see the header for why); as numbers, so that hasNicerSettings() can compare.
constexpr std::array kNicerSettings{
    Setting{"cpu_usage_limit", "100"},          Setting{"suspend_cpu_usage", "0"},
    Setting{"max_ncpus_pct", nullptr},          Setting{"run_if_user_active", "1"},
    Setting{"suspend_if_no_recent_input", "0"},
};

// Comments are kept, so that the volunteer's notes survive; the declaration too, when there is one. As a
// fragment, so that text outside the root element shows instead of being dropped.
constexpr unsigned kParseOptions =
    pugi::parse_default | pugi::parse_comments | pugi::parse_declaration | pugi::parse_fragment;

Result<void> load(pugi::xml_document& document, std::string_view xml) {
    if (text::trim(xml).empty()) {
        document.append_child(kRoot.data());
        return {};
    }
    const pugi::xml_parse_result parsed =
        document.load_buffer(xml.data(), xml.size(), kParseOptions, pugi::encoding_utf8);
    if (!parsed) {
        const auto before = xml.substr(
            0, std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(parsed.offset, 0)), xml.size()));
        return Error{"BOINC's preferences override (global_prefs_override.xml) is not well-formed XML: " +
                     std::string(parsed.description()) + " at line " +
                     std::to_string(1 + std::count(before.begin(), before.end(), '\n')) +
                     "; nicer leaves it as it is. Fix or remove the file in BOINC's data directory."};
    }
    // XML allows no text outside the root element: a file with some was mangled.
    std::size_t roots = 0;
    for (const pugi::xml_node child : document.children()) {
        if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
            return Error{
                "BOINC's preferences override (global_prefs_override.xml) is not well-formed XML: it "
                "has text outside its <global_preferences> element; nicer leaves it as it is. Fix or "
                "remove the file in BOINC's data directory."};
        }
        roots += child.type() == pugi::node_element ? 1 : 0;
    }
    const pugi::xml_node root = document.document_element();
    if (roots != 1 || std::string_view(root.name()) != kRoot) {
        return Error{
            "BOINC's preferences override (global_prefs_override.xml) is not one <global_preferences> "
            "element (its root is <" +
            std::string(root.name()) + ">); nicer leaves it as it is"};
    }
    return {};
}

// Sets the root's child @p name to @p value: the first such child keeps its place, later ones go (the
// client reads them in order, so the last one would win), and a missing one is appended.
void set(pugi::xml_node root, const char* name, const std::string& value) {
    pugi::xml_node node = root.child(name);
    if (!node) {
        node = root.append_child(name);
    }
    while (const pugi::xml_node extra = node.next_sibling(name)) {
        root.remove_child(extra);
    }
    while (node.first_child()) {
        node.remove_child(node.first_child());
    }
    node.text().set(value.c_str());
}

std::string save(const pugi::xml_document& document) {
    std::ostringstream out;
    document.save(out, "    ", pugi::format_indent | pugi::format_no_declaration, pugi::encoding_utf8);
    return out.str();
}

std::string wholeBytes(double bytesPerSecond) {
    if (!std::isfinite(bytesPerSecond) || bytesPerSecond <= 0.0) {
        return "0";
    }
    std::array<char, 32> digits{};
    const auto [ptr, ec] = std::to_chars(digits.data(), digits.data() + digits.size(),
                                         std::round(bytesPerSecond), std::chars_format::fixed, 0);
    return ec == std::errc{} ? std::string(digits.data(), ptr) : "0";
}

/// A percentage as BOINC reads it: "100", "50", "66.667".
std::string percentText(double percent) {
    std::array<char, 32> digits{};
    const auto [ptr, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), percent);
    return ec == std::errc{} ? std::string(digits.data(), ptr) : "100";
}

bool parseValue(std::string_view text, double& value) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc{} && ptr == text.data() + text.size();
}

} // namespace

Result<std::string> withNicerSettings(std::string_view userOverride, double maxNcpusPct) {
    pugi::xml_document document;
    if (auto loaded = load(document, userOverride); !loaded) {
        return loaded.error();
    }
    const pugi::xml_node root = document.document_element();
    for (const Setting& setting : kNicerSettings) {
        set(root, setting.name,
            setting.value == nullptr ? percentText(maxNcpusPct) : std::string(setting.value));
    }
    return save(document);
}

double maxNcpusPctFor(int instances, int cpus) {
    if (instances <= 0 || cpus <= 0 || instances >= cpus) {
        return 100.0;
    }
    return std::ceil(100'000.0 * instances / cpus) / 1000.0;
}

Result<std::string> withTransferLimits(std::string_view override, double maxDownBytesPerSecond,
                                       double maxUpBytesPerSecond) {
    pugi::xml_document document;
    if (auto loaded = load(document, override); !loaded) {
        return loaded.error();
    }
    const pugi::xml_node root = document.document_element();
    set(root, "max_bytes_sec_down", wholeBytes(maxDownBytesPerSecond));
    set(root, "max_bytes_sec_up", wholeBytes(maxUpBytesPerSecond));
    return save(document);
}

TransferCaps transferCapsOf(std::string_view override) {
    pugi::xml_document document;
    if (text::trim(override).empty() || !load(document, override)) {
        return {};
    }
    const auto last = [&](const char* name) {
        double value = 0.0;
        for (const pugi::xml_node node : document.document_element().children(name)) {
            if (!parseValue(text::trim(node.child_value()), value)) {
                value = 0.0;
            }
        }
        return std::isfinite(value) && value > 0.0 ? value : 0.0;
    };
    return {last("max_bytes_sec_down"), last("max_bytes_sec_up")};
}

bool hasNicerSettings(std::string_view override, std::optional<double> maxNcpusPct) {
    if (text::trim(override).empty()) {
        return false;
    }
    pugi::xml_document document;
    if (!load(document, override)) {
        return false;
    }
    const pugi::xml_node root = document.document_element();
    for (const Setting& setting : kNicerSettings) {
        // The client takes the last one it reads.
        pugi::xml_node last;
        for (const pugi::xml_node node : root.children(setting.name)) {
            last = node;
        }
        if (!last) {
            return false;
        }
        std::string_view text = text::trim(last.child_value());
        if (text.empty() && std::string_view(setting.name) == "run_if_user_active") {
            text = "1"; // <run_if_user_active/> is the old form of true
        }
        double have = 0.0;
        double want = 0.0;
        if (!parseValue(text, have)) {
            return false;
        }
        if (setting.value == nullptr) {
            if (maxNcpusPct && std::abs(have - *maxNcpusPct) > 1e-6) {
                return false;
            }
        } else if (!parseValue(setting.value, want) || have != want) {
            return false;
        }
    }
    return true;
}

} // namespace nicer::boinc
