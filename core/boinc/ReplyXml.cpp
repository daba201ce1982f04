#include "boinc/ReplyXml.h"

#include "util/Text.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace nicer::boinc::detail {

namespace {

std::string position(std::string_view xml, std::ptrdiff_t offset) {
    const auto at = std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(offset, 0)), xml.size());
    const auto before = xml.substr(0, at);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    return "line " + std::to_string(line) + " (byte " + std::to_string(at) + ")";
}

bool parseDouble(std::string_view text, double& value) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc{} && ptr == text.data() + text.size() && std::isfinite(value);
}

} // namespace

Error replyError(std::string_view rpc, std::string_view what) {
    return Error{"BOINC's reply to " + std::string(rpc) + " " + std::string(what)};
}

Result<pugi::xml_node> loadReply(pugi::xml_document& document, std::string_view reply, std::string_view rpc,
                                 bool errorIsFailure) {
    const pugi::xml_parse_result parsed =
        document.load_buffer(reply.data(), reply.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
        return replyError(rpc, "is not well-formed XML: " + std::string(parsed.description()) + " at " +
                                   position(reply, parsed.offset));
    }
    const pugi::xml_node root = document.document_element();
    if (std::string_view(root.name()) != "boinc_gui_rpc_reply") {
        return replyError(rpc, "is not a GUI RPC reply: its root element is <" + std::string(root.name()) +
                                   ">, not <boinc_gui_rpc_reply>");
    }
    if (root.child("unauthorized")) {
        return replyError(rpc, "is <unauthorized/>: the client did not accept nicer's GUI RPC password");
    }
    if (const pugi::xml_node error = root.child("error"); error && errorIsFailure) {
        return replyError(rpc, "is an error: " + std::string(textOf(error)));
    }
    return root;
}

Result<pugi::xml_node> answer(pugi::xml_node reply, const char* name, std::string_view rpc) {
    const pugi::xml_node node = reply.child(name);
    if (!node) {
        return replyError(rpc, "has no <" + std::string(name) + "> element");
    }
    if (node.next_sibling(name)) {
        return replyError(rpc, "has more than one <" + std::string(name) + "> element");
    }
    return node;
}

std::string_view textOf(pugi::xml_node node) {
    return text::trim(node.child_value());
}

bool flag(pugi::xml_node parent, const char* name) {
    const pugi::xml_node node = parent.child(name);
    if (!node) {
        return false;
    }
    const std::string_view value = textOf(node);
    double number = 0.0;
    return value.empty() || !parseDouble(value, number) || number != 0.0;
}

Fields::Fields(pugi::xml_node node, std::string_view rpc, std::string where)
    : m_node(node)
    , m_rpc(rpc)
    , m_where(std::move(where)) {}

Error Fields::fieldError(const char* name, std::string_view what) const {
    return replyError(m_rpc, "has " + m_where + " with " + std::string(what) + " <" + name + ">");
}

Result<double> Fields::number(const char* name, bool required, double fallback) const {
    const pugi::xml_node node = m_node.child(name);
    if (!node) {
        if (required) {
            return fieldError(name, "no");
        }
        return fallback;
    }
    const std::string_view value = textOf(node);
    double number = 0.0;
    if (!parseDouble(value, number)) {
        return replyError(m_rpc, "has " + m_where + " with <" + name + ">" + std::string(value) + "</" +
                                     name + ">, which is not a number");
    }
    return number;
}

Result<std::int64_t> Fields::integer(const char* name, bool required, std::int64_t fallback) const {
    auto value = number(name, required, static_cast<double>(fallback));
    if (!value) {
        return value.error();
    }
    // BOINC writes some counts and times with "%f"; the whole part is what they mean.
    if (*value < -9.0e18 || *value > 9.0e18) {
        return fieldError(name, "an out-of-range");
    }
    return static_cast<std::int64_t>(std::floor(*value));
}

Result<std::string> Fields::text(const char* name, bool required) const {
    const pugi::xml_node node = m_node.child(name);
    const std::string_view value = textOf(node);
    if (required && value.empty()) {
        return fieldError(name, node ? "an empty" : "no");
    }
    return std::string(value);
}

} // namespace nicer::boinc::detail
