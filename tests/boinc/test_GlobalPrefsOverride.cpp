// nicer's settings in BOINC's preferences override: the volunteer's own elements kept, nicer's set once,
// a broken override refused; on an override recorded from the real client and on written ones.

#include "boinc/GlobalPrefsOverride.h"
#include "boinc/GuiRpcReplies.h"
#include "boinc/Replies.h"

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include <string>

using namespace nicer;
using namespace nicer::boinc;
using nicer::test::recordedReply;

namespace {

// The document element of @p xml, which must parse.
pugi::xml_node rootOf(pugi::xml_document& document, const std::string& xml) {
    INFO(xml);
    REQUIRE(document.load_string(xml.c_str(), pugi::parse_default | pugi::parse_comments));
    return document.document_element();
}

int count(pugi::xml_node root, const char* name) {
    int n = 0;
    for ([[maybe_unused]] const pugi::xml_node node : root.children(name)) {
        ++n;
    }
    return n;
}

std::string valueOf(pugi::xml_node root, const char* name) {
    return root.child(name).child_value();
}

void checkNicerSettings(pugi::xml_node root) {
    CHECK(valueOf(root, "cpu_usage_limit") == "100");
    CHECK(valueOf(root, "suspend_cpu_usage") == "0");
    CHECK(valueOf(root, "max_ncpus_pct") == "100");
    CHECK(valueOf(root, "run_if_user_active") == "1");
    CHECK(valueOf(root, "suspend_if_no_recent_input") == "0");
    for (const char* name : {"cpu_usage_limit", "suspend_cpu_usage", "max_ncpus_pct", "run_if_user_active",
                             "suspend_if_no_recent_input"}) {
        INFO(name);
        CHECK(count(root, name) == 1);
    }
}

} // namespace

TEST_CASE("nicer's settings on no override at all", "[GlobalPrefsOverride]") {
    for (const char* none : {"", "  \n"}) {
        const auto xml = withNicerSettings(none);
        REQUIRE(xml.ok());
        pugi::xml_document document;
        const pugi::xml_node root = rootOf(document, *xml);
        CHECK(std::string(root.name()) == "global_preferences");
        checkNicerSettings(root);
        CHECK(hasNicerSettings(*xml));
    }
}

TEST_CASE("nicer's settings on the volunteer's override from the real client keep everything else",
          "[GlobalPrefsOverride]") {
    const auto user = parseGlobalPrefsOverride(recordedReply("own-get_global_prefs_override.xml"));
    REQUIRE(user.ok());
    CHECK_FALSE(hasNicerSettings(*user)); // cpu_usage_limit 80, suspend_cpu_usage 25, ...

    const auto xml = withNicerSettings(*user);
    REQUIRE(xml.ok());
    pugi::xml_document document;
    const pugi::xml_node root = rootOf(document, *xml);
    checkNicerSettings(root);
    CHECK(valueOf(root, "run_on_batteries") == "0");
    CHECK(valueOf(root, "disk_max_used_gb") == "10.000000");
    CHECK(valueOf(root, "max_bytes_sec_down") == "0.000000");
    CHECK(hasNicerSettings(*xml));
    // Applying it again changes nothing.
    CHECK(withNicerSettings(*xml).value() == *xml);
}

TEST_CASE("the volunteer's comments, attributes, venues and flags stay, duplicates of nicer's go",
          "[GlobalPrefsOverride]") {
    const std::string user =
        "<?xml version=\"1.0\"?>\n"
        "<global_preferences>\n"
        "  <!-- set by hand: keep my GPU off while I play -->\n"
        "  <run_gpu_if_user_active/>\n"
        "  <cpu_usage_limit>50</cpu_usage_limit>\n"
        "  <venue name=\"home\">\n    <cpu_usage_limit>30</cpu_usage_limit>\n  </venue>\n"
        "  <cpu_usage_limit>60</cpu_usage_limit>\n"
        "  <day_prefs>\n    <day_of_week>1</day_of_week>\n    <start_hour>8</start_hour>\n"
        "  </day_prefs>\n"
        "  <work_buf_min_days>0.5 &amp; more</work_buf_min_days>\n"
        "</global_preferences>\n";
    const auto xml = withNicerSettings(user);
    REQUIRE(xml.ok());
    pugi::xml_document document;
    const pugi::xml_node root = rootOf(document, *xml);
    checkNicerSettings(root);
    CHECK_THAT(*xml, Catch::Contains("<!-- set by hand: keep my GPU off while I play -->"));
    CHECK(root.child("run_gpu_if_user_active"));
    CHECK_THAT(*xml, Catch::Contains("<run_gpu_if_user_active />")); // BOINC reads "<x />" as the flag
    CHECK(std::string(root.child("venue").attribute("name").value()) == "home");
    CHECK(valueOf(root.child("venue"), "cpu_usage_limit") == "30"); // a venue is the volunteer's
    CHECK(valueOf(root.child("day_prefs"), "start_hour") == "8");
    CHECK(valueOf(root, "work_buf_min_days") == "0.5 & more");
    CHECK_THAT(*xml, Catch::Contains("0.5 &amp; more"));
}

TEST_CASE("a broken override is an error, never replaced", "[GlobalPrefsOverride]") {
    const auto junk = parseGlobalPrefsOverride(recordedReply("own-get_global_prefs_override-stray-text.xml"));
    REQUIRE(junk.ok());
    const auto stray = withNicerSettings(*junk);
    REQUIRE_FALSE(stray.ok());
    CHECK_THAT(stray.error().message, Catch::Contains("nicer leaves it as it is"));
    CHECK_FALSE(hasNicerSettings(*junk));

    const auto truncated = withNicerSettings("<global_preferences>\n<cpu_usage_limit>80</cpu_usage_limit>\n");
    REQUIRE_FALSE(truncated.ok());
    CHECK_THAT(
        truncated.error().message,
        Catch::StartsWith("BOINC's preferences override (global_prefs_override.xml) is not well-formed "
                          "XML: "));
    CHECK_THAT(truncated.error().message, Catch::Contains("at line "));

    const auto wrongRoot = withTransferLimits("<cc_config>\n</cc_config>\n", 1000, 1000);
    REQUIRE_FALSE(wrongRoot.ok());
    CHECK(wrongRoot.error().message ==
          "BOINC's preferences override (global_prefs_override.xml) is not one <global_preferences> element "
          "(its root is <cc_config>); nicer leaves it as it is");

    const auto twoRoots = withNicerSettings("<global_preferences/><global_preferences/>");
    REQUIRE_FALSE(twoRoots.ok());
}

TEST_CASE("transfer limits in whole bytes per second, 0 is no limit", "[GlobalPrefsOverride]") {
    const auto nicer = withNicerSettings("");
    REQUIRE(nicer.ok());
    const auto limited = withTransferLimits(*nicer, 125000.4, 50000.6);
    REQUIRE(limited.ok());
    pugi::xml_document document;
    pugi::xml_node root = rootOf(document, *limited);
    CHECK(valueOf(root, "max_bytes_sec_down") == "125000");
    CHECK(valueOf(root, "max_bytes_sec_up") == "50001");
    checkNicerSettings(root); // the CPU settings stay
    CHECK(hasNicerSettings(*limited));

    const auto unlimited = withTransferLimits(*limited, 0, -5);
    REQUIRE(unlimited.ok());
    pugi::xml_document again;
    root = rootOf(again, *unlimited);
    CHECK(valueOf(root, "max_bytes_sec_down") == "0");
    CHECK(valueOf(root, "max_bytes_sec_up") == "0");
    CHECK(count(root, "max_bytes_sec_down") == 1);
}

TEST_CASE("hasNicerSettings reads the values as the client does", "[GlobalPrefsOverride]") {
    const std::string written = "<global_preferences>\n"
                                "   <run_if_user_active/>\n"
                                "   <suspend_if_no_recent_input>0.000000</suspend_if_no_recent_input>\n"
                                "   <suspend_cpu_usage>0.000000</suspend_cpu_usage>\n"
                                "   <max_ncpus_pct>100.000000</max_ncpus_pct>\n"
                                "   <cpu_usage_limit>100.000000</cpu_usage_limit>\n"
                                "</global_preferences>\n";
    CHECK(hasNicerSettings(written));
    // The client takes the last of two.
    std::string overridden = written;
    overridden.insert(overridden.find("</global_preferences>"), "   <cpu_usage_limit>50</cpu_usage_limit>\n");
    CHECK_FALSE(hasNicerSettings(overridden));
    std::string missing = written;
    missing.erase(missing.find("   <max_ncpus_pct>"),
                  std::string("   <max_ncpus_pct>100.000000</max_ncpus_pct>\n").size());
    CHECK_FALSE(hasNicerSettings(missing));
    CHECK_FALSE(hasNicerSettings(""));
}

TEST_CASE("transferCapsOf() reads the volunteer's own transfer limits, the last of each",
          "[GlobalPrefsOverride]") {
    using nicer::boinc::transferCapsOf;
    const auto caps = transferCapsOf("<global_preferences>\n<max_bytes_sec_down>5000</max_bytes_sec_down>\n"
                                     "<max_bytes_sec_down>250000</max_bytes_sec_down>\n"
                                     "<max_bytes_sec_up>0</max_bytes_sec_up>\n</global_preferences>\n");
    CHECK(caps.down == 250000);
    CHECK(caps.up == 0); // 0 is "no limit", as in BOINC
    CHECK(transferCapsOf("").down == 0);
    CHECK(transferCapsOf(
              "<global_preferences><max_bytes_sec_down>fast</max_bytes_sec_down></global_preferences>")
              .down == 0);
    CHECK(transferCapsOf("<broken").down == 0);
}

TEST_CASE("the profile's instances become BOINC's max_ncpus_pct, rounded up so that BOINC counts them whole",
          "[GlobalPrefsOverride]") {
    CHECK(boinc::maxNcpusPctFor(0, 4) == 100.0); // all
    CHECK(boinc::maxNcpusPctFor(4, 4) == 100.0);
    CHECK(boinc::maxNcpusPctFor(9, 4) == 100.0);
    CHECK(boinc::maxNcpusPctFor(1, 2) == 50.0);
    CHECK(boinc::maxNcpusPctFor(2, 3) == Approx(66.667));
    // BOINC's own count: the CPUs times the share, rounded down.
    for (int cpus = 1; cpus <= 64; ++cpus) {
        for (int n = 1; n < cpus; ++n) {
            CAPTURE(cpus, n);
            CHECK(static_cast<int>(cpus * boinc::maxNcpusPctFor(n, cpus) / 100.0) == n);
        }
    }
    const auto half = boinc::withNicerSettings("", 50.0);
    REQUIRE(half.ok());
    CHECK_THAT(*half, Catch::Contains("<max_ncpus_pct>50</max_ncpus_pct>"));
    CHECK(boinc::hasNicerSettings(*half, 50.0));
    CHECK_FALSE(boinc::hasNicerSettings(*half)); // nicer's wants 100 then: sent again
    const auto third = boinc::withNicerSettings(*half, boinc::maxNcpusPctFor(2, 3));
    REQUIRE(third.ok());
    CHECK_THAT(*third, Catch::Contains("<max_ncpus_pct>66.667</max_ncpus_pct>"));
    CHECK(boinc::hasNicerSettings(*third, 66.667));
}
