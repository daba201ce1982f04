#pragma once

// nicerd's D-Bus interface as a list of members, from introspection XML or resources/org.nicer.Daemon1.xml,
// so tests can compare what is published with what is documented.

#include "api/BusNames.h"

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::test {

/// "property ReserveBand d", "method Pause", "signal Sample", ...: the members of @p interface in @p doc,
/// sorted; empty when the document has no such interface.
inline std::vector<std::string> interfaceMembers(const pugi::xml_document& doc,
                                                 std::string_view interface = api::kInterface) {
    std::vector<std::string> found;
    for (const auto& node : doc.select_nodes("//interface")) {
        if (node.node().attribute("name").value() != interface) {
            continue;
        }
        for (const auto& member : node.node().children()) {
            const std::string kind = member.name();
            if (kind == "property") {
                found.push_back(kind + " " + member.attribute("name").value() + " " +
                                member.attribute("type").value());
            } else if (kind == "method" || kind == "signal") {
                found.push_back(kind + " " + member.attribute("name").value());
            }
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

/// The members of @p interface in introspection XML @p xml.
inline std::vector<std::string> interfaceMembers(const std::string& xml,
                                                 std::string_view interface = api::kInterface) {
    pugi::xml_document doc;
    const auto parsed = doc.load_string(xml.c_str());
    INFO(parsed.description());
    REQUIRE(parsed);
    return interfaceMembers(doc, interface);
}

/// The members of @p interface in the XML file @p path (resources/org.nicer.Daemon1.xml).
inline std::vector<std::string> interfaceMembersInFile(const std::filesystem::path& path,
                                                       std::string_view interface = api::kInterface) {
    pugi::xml_document doc;
    const auto parsed = doc.load_file(path.c_str());
    INFO(path.string() << ": " << parsed.description());
    REQUIRE(parsed);
    return interfaceMembers(doc, interface);
}

} // namespace nicer::test
