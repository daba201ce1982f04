// The property table (api/DaemonProperties.h) and the bus structs' field lists (api/BusStruct.h) against
// the interface's XML: the lists every side of the bus loops over must be the interface as documented,
// property by property and field by field.

#include "api/BusNames.h"
#include "api/BusStruct.h"
#include "api/DaemonProperties.h"
#include "api/DaemonState.h"
#include "control/ParameterTable.h"

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace nicer;

namespace {

struct XmlProperty {
    std::string type;
    std::string emitsChanged; ///< the EmitsChangedSignal annotation; "true" when it has none
};

/// resources/org.nicer.Daemon1.xml, parsed.
const pugi::xml_document& interfaceXml() {
    static const auto doc = [] {
        auto d = std::make_unique<pugi::xml_document>();
        const auto path = std::string(NICER_RESOURCES) + "/org.nicer.Daemon1.xml";
        const auto parsed = d->load_file(path.c_str());
        INFO(path << ": " << parsed.description());
        REQUIRE(parsed);
        return d;
    }();
    return *doc;
}

pugi::xml_node interfaceNode() {
    return interfaceXml().select_node("//interface[@name='org.nicer.Daemon1']").node();
}

std::map<std::string, XmlProperty> xmlProperties() {
    std::map<std::string, XmlProperty> found;
    const auto interface = interfaceNode();
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
        CAPTURE(api::busKeyword(state));
        CHECK(api::busKeywordValue<api::BoincState>(api::busKeyword(state)) == state);
    }
    CHECK(api::busKeyword(api::BoincState::Held) == "held");
    // A newer nicerd's state: none here (the bindings read it as Error, whose detail says what it is).
    CHECK_FALSE(api::busKeywordValue<api::BoincState>("benchmarking").has_value());
    CHECK(api::boincAnswers(api::BoincState::Suspended));
    CHECK_FALSE(api::boincAnswers(api::BoincState::Held));
    // On the bus it is a string.
    CHECK(api::signatureOf(*api::findProperty("BoincState")) == "s");
}

namespace {

/// Every value of @p Enum has its own keyword, which reads back as the value.
template <api::KeywordEnum Enum>
void checkKeywordsRoundTrip() {
    const auto& keywords = api::BusKeywords<Enum>::keywords;
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < keywords.size(); ++i) {
        const auto value = static_cast<Enum>(i);
        CAPTURE(api::busKeyword(value));
        CHECK(seen.insert(api::busKeyword(value)).second);
        CHECK(api::fromBusKeyword<Enum>(api::busKeyword(value)) == value);
    }
}

} // namespace

TEST_CASE("task, transfer, placement, actuator and signal travel as the keywords they had as strings",
          "[dbus][DaemonProperties]") {
    checkKeywordsRoundTrip<api::BoincTaskState>();
    checkKeywordsRoundTrip<api::BoincTransferState>();
    checkKeywordsRoundTrip<api::Placement>();
    checkKeywordsRoundTrip<api::Actuator>();
    checkKeywordsRoundTrip<control::Signal>();
    CHECK(api::busKeyword(api::BoincTaskState::ReadyToReport) == "ready-to-report");
    CHECK(api::busKeyword(api::BoincTransferState::Active) == "active");
    CHECK(api::busKeyword(api::Placement::RootSlice) == "root-slice");
    CHECK(api::busKeyword(api::Actuator::FreezerDutyCycle) == "freezer-duty-cycle");
    CHECK(api::busKeyword(control::Signal::Outside) == "outside");
    // A newer nicerd's keyword reads as the state BusKeywords names.
    CHECK(api::fromBusKeyword<api::BoincTaskState>("benchmarking") == api::BoincTaskState::Ready);
    CHECK(api::fromBusKeyword<api::Actuator>("sched-ext") == api::Actuator::SystemdSlice);
    // On the bus each is a string, as before.
    for (const char* name : {"Placement", "Actuator", "Signal", "SignalSetting"}) {
        INFO(name);
        CHECK(api::signatureOf(*api::findProperty(name)) == "s");
    }
    CHECK(api::signatureOf(*api::findProperty("BoincTasks")) == "a(sssdddxdd)");
    CHECK(api::signatureOf(*api::findProperty("BoincTransfers")) == "a(ssbddds)");
}

namespace {

/// A bus struct as the XML can show it: an array of it (a property, a method's argument), or its fields as a
/// signal's arguments.
struct StructOnBus {
    std::string array;              ///< "a(sssb)"
    std::string fields;             ///< "sssb"
    std::vector<std::string> names; ///< the fields' names
};

template <api::BusStruct Struct>
StructOnBus onBus() {
    StructOnBus s{std::string(api::kArraySignature<Struct>.view()),
                  std::string(api::kFieldsSignature<Struct>.view()),
                  {}};
    api::forEachField<Struct>([&](const auto& field) { s.names.emplace_back(field.name); });
    return s;
}

/// Every bus struct, by the name of its list in the tray (the XML's QtTypeName annotations, which
/// qdbusxml2cpp puts in the generated proxy; app/tray/BusTypes.h declares them).
const std::map<std::string, StructOnBus>& structsByQtName() {
    static const std::map<std::string, StructOnBus> structs = {
        {"nicer::tray::PresetInfoList", onBus<api::PresetInfo>()},
        {"nicer::tray::DownloadEntryList", onBus<api::DownloadEntry>()},
        {"nicer::tray::SampleList", onBus<api::Sample>()},
        {"nicer::tray::BoincProjectList", onBus<api::BoincProject>()},
        {"nicer::tray::BoincTaskList", onBus<api::BoincTask>()},
        {"nicer::tray::BoincTransferList", onBus<api::BoincTransfer>()},
        {"nicer::tray::BoincNoticeList", onBus<api::BoincNotice>()},
    };
    return structs;
}

/// The signals whose arguments are a struct's fields, by the struct's list name as above.
const std::map<std::string, std::string> kSignalStructs = {{"Sample", "nicer::tray::SampleList"}};

/// The QtTypeName annotation @p name of @p node ("org.qtproject.QtDBus.QtTypeName", ".Out0", ...), or "".
std::string qtTypeName(const pugi::xml_node& node, const std::string& name) {
    return node.find_child_by_attribute("annotation", "name", name.c_str()).attribute("value").value();
}

} // namespace

TEST_CASE("every struct type in the interface's XML is the signature its api field list gives, and names "
          "the tray's type of it",
          "[dbus][DaemonProperties][BusStruct]") {
    const auto& structs = structsByQtName();
    std::set<std::string> used;
    // A property, or a method's argument, of type @p type with the QtTypeName @p qtName.
    const auto check = [&](const std::string& what, const std::string& type, const std::string& qtName) {
        INFO(what << " " << type << " (QtTypeName " << qtName << ")");
        if (type.find('(') == std::string::npos) {
            CHECK(qtName.find("nicer::") == std::string::npos); // a tray type only for the structs
            return;
        }
        const auto it = structs.find(qtName);
        REQUIRE(it != structs.end()); // a struct type must name its list: add the struct to structsByQtName
        CHECK(type == it->second.array);
        used.insert(qtName);
    };
    const auto interface = interfaceNode();
    for (const auto& property : interface.children("property")) {
        check(std::string("property ") + property.attribute("name").value(),
              property.attribute("type").value(), qtTypeName(property, "org.qtproject.QtDBus.QtTypeName"));
    }
    for (const auto& method : interface.children("method")) {
        int in = 0;
        int out = 0;
        for (const auto& arg : method.children("arg")) {
            const bool isOut = std::string(arg.attribute("direction").value()) == "out";
            const std::string annotation = std::string("org.qtproject.QtDBus.QtTypeName.") +
                                           (isOut ? "Out" : "In") + std::to_string(isOut ? out++ : in++);
            check(std::string("method ") + method.attribute("name").value() + " arg " +
                      arg.attribute("name").value(),
                  arg.attribute("type").value(), qtTypeName(method, annotation));
        }
    }
    for (const auto& signal : interface.children("signal")) {
        const std::string name = signal.attribute("name").value();
        INFO("signal " << name);
        std::string types;
        std::vector<std::string> names;
        for (const auto& arg : signal.children("arg")) {
            types += arg.attribute("type").value();
            names.emplace_back(arg.attribute("name").value());
        }
        const auto carries = kSignalStructs.find(name);
        if (carries == kSignalStructs.end()) {
            CHECK(types.find('(') == std::string::npos); // a struct argument: name its list as the methods do
            continue;
        }
        const auto& fields = structs.at(carries->second);
        CHECK(types == fields.fields);
        CHECK(names == fields.names);
        used.insert(carries->second);
    }
    // Every field list is on the bus somewhere.
    for (const auto& [qtName, fields] : structs) {
        INFO(qtName);
        CHECK(used.count(qtName) == 1);
    }
}

TEST_CASE("the structs' signatures are those of ApiVersion 16", "[dbus][DaemonProperties][BusStruct]") {
    // Written out by hand on purpose: the wire format the version stands for. A field list that changes fails
    // here: bump api::kApiVersion, say what changed in the XML's header, and write the new signatures here.
    CHECK(api::kApiVersion == 16);
    CHECK(api::kFieldsSignature<api::PresetInfo>.view() == "sssb");
    CHECK(api::kFieldsSignature<api::Sample>.view() == "tddddddubbdss");
    CHECK(api::kFieldsSignature<api::DownloadEntry>.view() == "sttdsbsx");
    CHECK(api::kFieldsSignature<api::BoincProject>.view() == "ssdddbbb");
    CHECK(api::kFieldsSignature<api::BoincTask>.view() == "sssdddxdd");
    CHECK(api::kFieldsSignature<api::BoincTransfer>.view() == "ssbddds");
    CHECK(api::kFieldsSignature<api::BoincNotice>.view() == "xxsssb");
    CHECK(api::kArraySignature<api::Sample>.view() == "a(tddddddubbdss)");
    CHECK(std::string(api::kStructSignature<api::PresetInfo>) == "(sssb)");
}
