// The property table (api/DaemonProperties.h) against the interface's XML: the one list every side of the
// bus loops over must be the interface as documented, property by property.

#include "api/DaemonProperties.h"
#include "api/DaemonState.h"
#include "control/ParameterTable.h"

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include <map>
#include <set>
#include <string>

using namespace nicer;

namespace {

struct XmlProperty {
    std::string type;
    std::string emitsChanged; ///< the EmitsChangedSignal annotation; "true" when it has none
};

std::map<std::string, XmlProperty> xmlProperties() {
    pugi::xml_document doc;
    const auto path = std::string(NICER_RESOURCES) + "/org.nicer.Daemon1.xml";
    const auto parsed = doc.load_file(path.c_str());
    INFO(path << ": " << parsed.description());
    REQUIRE(parsed);
    std::map<std::string, XmlProperty> found;
    const auto interface = doc.select_node("//interface[@name='org.nicer.Daemon1']").node();
    for (const auto& property : interface.children("property")) {
        XmlProperty p{property.attribute("type").value(), "true"};
        const auto emits = property.find_child_by_attribute(
            "annotation", "name", "org.freedesktop.DBus.Property.EmitsChangedSignal");
        if (emits) {
            p.emitsChanged = emits.attribute("value").value();
        }
        found.emplace(property.attribute("name").value(), p);
    }
    return found;
}

std::string emitsChangedOf(api::Announce announce) {
    switch (announce) {
    case api::Announce::Never:
        return "const";
    case api::Announce::OnChange:
        return "true";
    case api::Announce::PerPeriod:
        break;
    }
    return "false";
}

} // namespace

TEST_CASE("the property table and the interface's XML have the same properties, types and announcements",
          "[dbus][DaemonProperties]") {
    const auto xml = xmlProperties();
    REQUIRE(xml.size() > 10);
    std::set<std::string> inTable;
    for (const auto& property : api::daemonProperties()) {
        INFO("property " << property.name);
        CHECK(inTable.insert(property.name).second); // named once
        const auto it = xml.find(property.name);
        CHECK(it != xml.end()); // in the table, not in the XML
        if (it != xml.end()) {
            CHECK(it->second.type == api::signatureOf(property));
            CHECK(it->second.emitsChanged == emitsChangedOf(property.announce));
        }
    }
    for (const auto& [name, property] : xml) {
        INFO("property " << name);
        CHECK(inTable.count(name) == 1); // in the XML, not in the table
    }
}

TEST_CASE("every parameter of the parameter table is a property, announced when it changes",
          "[dbus][DaemonProperties]") {
    for (const auto& info : control::parameterTable()) {
        INFO(info.busName);
        const auto* property = api::findProperty(info.busName);
        REQUIRE(property != nullptr);
        CHECK(api::signatureOf(*property) == info.busSignature);
        CHECK(property->announce == api::Announce::OnChange);
    }
    CHECK(api::findProperty("NoSuchProperty") == nullptr);
}

TEST_CASE("sameValue compares exactly the property's field", "[dbus][DaemonProperties]") {
    api::DaemonState a;
    api::DaemonState b;
    b.boinc.tasks.emplace_back();
    b.params.reserveBand = a.params.reserveBand / 2;
    for (const auto& property : api::daemonProperties()) {
        const std::string name = property.name;
        INFO(name);
        CHECK(api::sameValue(property, a, b) == (name != "BoincTasks" && name != "ReserveBand"));
        CHECK(api::sameValue(property, b, b));
    }
}

TEST_CASE("each BOINC state has one keyword, which reads back as the state", "[dbus][DaemonProperties]") {
    for (std::size_t i = 0; i < api::kBoincStateKeywords.size(); ++i) {
        const auto state = static_cast<api::BoincState>(i);
        CAPTURE(api::boincStateKeyword(state));
        CHECK(api::boincStateFromKeyword(api::boincStateKeyword(state)) == state);
    }
    CHECK(api::boincStateKeyword(api::BoincState::Held) == "held");
    // A newer nicerd's state: none here (the bindings read it as Error, whose detail says what it is).
    CHECK_FALSE(api::boincStateFromKeyword("benchmarking").has_value());
    CHECK(api::boincAnswers(api::BoincState::Suspended));
    CHECK_FALSE(api::boincAnswers(api::BoincState::Held));
    // On the bus it is a string.
    CHECK(api::signatureOf(*api::findProperty("BoincState")) == "s");
}
