#pragma once

// Reading a GUI RPC reply with pugixml, shared by the parsers of GuiRpcProtocol and GuiRpcReplies: the
// envelope, BOINC's own error answers, and fields that say which request and which element were wrong.

#include "util/Result.h"

#include <pugixml.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace nicer::boinc::detail {

/// "BOINC's reply to <rpc> <what>": the one form of a parser's error.
Error replyError(std::string_view rpc, std::string_view what);

/// Parses @p reply into @p document and returns its <boinc_gui_rpc_reply> element. Fails when the XML is
/// not well-formed (with where), when the root is something else, on <unauthorized/>, and, when
/// @p errorIsFailure, on an <error> element (with BOINC's text).
Result<pugi::xml_node> loadReply(pugi::xml_document& document, std::string_view reply, std::string_view rpc,
                                 bool errorIsFailure = true);

/// The one child element @p name of @p reply that carries the answer (<cc_status>, <projects>, ...).
Result<pugi::xml_node> answer(pugi::xml_node reply, const char* name, std::string_view rpc);

/// The element's text (CDATA included) without surrounding white space.
std::string_view textOf(pugi::xml_node node);

/// A BOINC flag: true when the child is there as <name/> or with a non-zero number in it (lib/parse.cpp's
/// parse_bool reads both forms).
bool flag(pugi::xml_node parent, const char* name);

/// The error of the first of @p results that failed, or nullptr when they all hold a value.
template <typename... Results>
const Error* firstError(const Results&... results) {
    const Error* error = nullptr;
    ((error = error != nullptr ? error : (results ? nullptr : &results.error())), ...);
    return error;
}

/// Reads numbers out of one element of a reply and names that element when one is missing or wrong.
class Fields {
public:
    /// @p where says which element it is in messages, e.g. "<result> number 2".
    Fields(pugi::xml_node node, std::string_view rpc, std::string where);

    /// The number in child @p name; @p fallback when the child is missing and not @p required.
    Result<double> number(const char* name, bool required, double fallback = 0.0) const;
    Result<std::int64_t> integer(const char* name, bool required, std::int64_t fallback = 0) const;
    /// The text of child @p name; an error when @p required and it is missing or empty.
    Result<std::string> text(const char* name, bool required) const;

private:
    Error fieldError(const char* name, std::string_view what) const;

    pugi::xml_node m_node;
    std::string_view m_rpc;
    std::string m_where;
};

} // namespace nicer::boinc::detail
