// The GUI RPC's framing, reply buffer, password hash, escaping and the small replies, on replies recorded
// from the real client (tests/boinc/replies/) and on broken ones.

#include "boinc/GuiRpcProtocol.h"
#include "boinc/Replies.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nicer;
using namespace nicer::boinc;
using nicer::test::recordedReply;
using nicer::test::wrapReply;

TEST_CASE("a request is framed as the client reads it", "[GuiRpcProtocol]") {
    CHECK(frameRequest("<get_cc_status/>\n") ==
          "<boinc_gui_rpc_request>\n<get_cc_status/>\n</boinc_gui_rpc_request>\n\003");
}

TEST_CASE("requestName names the request for messages", "[GuiRpcProtocol]") {
    CHECK(requestName("<get_cc_status/>\n") == "get_cc_status");
    CHECK(requestName("<get_notices>\n<seqno>3</seqno>\n</get_notices>\n") == "get_notices");
    CHECK(requestName("\n  <quit/>") == "quit");
    CHECK(requestName("<auth1>") == "auth1");
    CHECK(requestName("") == "request");
    CHECK(requestName("no tag") == "request");
}

TEST_CASE("xmlEscape writes the five XML specials as entities and leaves the rest", "[GuiRpcProtocol]") {
    CHECK(xmlEscape("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    CHECK(xmlEscape("https://example.org/?a=1") == "https://example.org/?a=1");
    CHECK(xmlEscape("Grüße") == "Grüße");
    CHECK(xmlEscape("") == "");
}

TEST_CASE("authHash is md5(nonce + password) in lowercase hex, as the client checks it", "[GuiRpcProtocol]") {
    // The same md5 computed independently: hashlib.md5(b"1795548644.540498"
    // b"01ebc02d76430896d82f08c8a96adee").
    const auto hash = authHash("1795548644.540498", "01ebc02d76430896d82f08c8a96adee");
    REQUIRE(hash.ok());
    CHECK(*hash == "29593fa0a20d99d22900ada63787271a");
    const auto empty = authHash("", "");
    REQUIRE(empty.ok());
    CHECK(*empty == "d41d8cd98f00b204e9800998ecf8427e"); // md5 of nothing
}

TEST_CASE("ReplyBuffer yields each complete reply once, in order, without its end byte", "[GuiRpcProtocol]") {
    ReplyBuffer buffer;
    CHECK(buffer.append("<boinc_gui_rpc_reply>\n<succ").ok());
    CHECK_FALSE(buffer.next().has_value());
    CHECK(buffer.append("ess/>\n</boinc_gui_rpc_reply>\n\003<boinc_gui_rpc_reply>\n").ok());
    const auto first = buffer.next();
    REQUIRE(first.has_value());
    CHECK(*first == "<boinc_gui_rpc_reply>\n<success/>\n</boinc_gui_rpc_reply>\n");
    CHECK_FALSE(buffer.next().has_value());
    CHECK_FALSE(buffer.empty()); // the second reply is under way
    CHECK(buffer.append("</boinc_gui_rpc_reply>\n\003\003").ok());
    const auto second = buffer.next();
    REQUIRE(second.has_value());
    CHECK(*second == "<boinc_gui_rpc_reply>\n</boinc_gui_rpc_reply>\n");
    const auto third = buffer.next(); // an empty reply is a reply
    REQUIRE(third.has_value());
    CHECK(third->empty());
    CHECK_FALSE(buffer.next().has_value());
    CHECK(buffer.empty());
}

TEST_CASE("ReplyBuffer refuses a reply larger than its limit, complete or not", "[GuiRpcProtocol]") {
    SECTION("an incomplete reply grows past the limit") {
        ReplyBuffer buffer(16);
        CHECK(buffer.append("0123456789").ok());
        CHECK(buffer.append("012345").ok()); // 16 bytes with no \003 yet: still fits
        const auto over = buffer.append("6");
        REQUIRE_FALSE(over.ok());
        CHECK(over.error().message == "a reply is larger than 16 bytes");
        CHECK(buffer.empty()); // cleared: the stream is no longer usable
    }
    SECTION("a complete reply that is too large, behind a small one in the same bytes") {
        ReplyBuffer buffer(16);
        const auto added = buffer.append("small\003" + std::string(17, 'x') + "\003");
        REQUIRE_FALSE(added.ok());
    }
    SECTION("replies of exactly the limit pass, one after the other") {
        ReplyBuffer buffer(16);
        CHECK(buffer.append(std::string(16, 'a') + "\003" + std::string(16, 'b') + "\003").ok());
        CHECK(buffer.next() == std::string(16, 'a'));
        CHECK(buffer.next() == std::string(16, 'b'));
    }
    SECTION("the default limit is 16 MiB") {
        ReplyBuffer buffer;
        CHECK(buffer.limit() == 16u * 1024 * 1024);
        CHECK(buffer.append(std::string(kMaxReplyBytes, 'x')).ok());
        CHECK_FALSE(buffer.append("x").ok());
    }
}

TEST_CASE("ReplyBuffer takes a reply one byte at a time", "[GuiRpcProtocol]") {
    const std::string reply = recordedReply("own-get_cc_status.xml");
    ReplyBuffer buffer;
    for (const char c : reply + '\003') {
        REQUIRE(buffer.append(std::string_view(&c, 1)).ok());
    }
    CHECK(buffer.next() == reply);
}

TEST_CASE("the nonce of auth1, from the real client", "[GuiRpcProtocol]") {
    const auto nonce = parseNonce(recordedReply("own-auth1.xml"));
    REQUIRE(nonce.ok());
    CHECK(*nonce == "1795549132.215376");

    const auto none = parseNonce(wrapReply("<authorized/>"));
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message == "BOINC's reply to auth1 has no <nonce>");
}

TEST_CASE("auth2: authorized, or the password refused", "[GuiRpcProtocol]") {
    CHECK(parseAuthorized(recordedReply("own-auth2-authorized.xml")).ok());

    const auto refused = parseAuthorized(recordedReply("own-auth2-unauthorized.xml"));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message ==
          "BOINC's reply to auth2 is <unauthorized/>: the client did not accept nicer's GUI RPC password");

    const auto neither = parseAuthorized(wrapReply("<nonce>1</nonce>"));
    REQUIRE_FALSE(neither.ok());
    CHECK(neither.error().message == "BOINC's reply to auth2 says neither <authorized/> nor <unauthorized/>");
}

TEST_CASE("success, BOINC's <error> and <status> replies", "[GuiRpcProtocol]") {
    CHECK(parseSuccess(recordedReply("own-project_attach.xml"), "project_attach").ok());

    const auto noProject =
        parseSuccess(recordedReply("own-project_detach-no-such-project.xml"), "project_detach");
    REQUIRE_FALSE(noProject.ok());
    CHECK(noProject.error().message == "BOINC's reply to project_detach is an error: No such project");

    const auto unknown = parseSuccess(recordedReply("own-unrecognized-op.xml"), "no_such_op");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message == "BOINC's reply to no_such_op is an error: unrecognized op: no_such_op/");

    const auto status = parseSuccess(wrapReply("<status>-108</status>"), "set_global_prefs_override");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message ==
          "BOINC's reply to set_global_prefs_override is a failure: BOINC error -108");

    const auto unauthorized = parseSuccess(recordedReply("own-auth2-unauthorized.xml"), "quit");
    REQUIRE_FALSE(unauthorized.ok());
    CHECK_THAT(unauthorized.error().message, Catch::Contains("<unauthorized/>"));

    const auto empty = parseSuccess(wrapReply(""), "quit");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().message == "BOINC's reply to quit says neither <success/> nor <error>");
}

TEST_CASE("malformed replies are errors that say which request and what is wrong", "[GuiRpcProtocol]") {
    const std::string whole = recordedReply("own-project_attach.xml");

    const auto truncated = parseSuccess(whole.substr(0, whole.size() / 2), "project_attach");
    REQUIRE_FALSE(truncated.ok());
    CHECK_THAT(truncated.error().message,
               Catch::StartsWith("BOINC's reply to project_attach is not well-formed XML: "));
    CHECK_THAT(truncated.error().message, Catch::Contains("line "));

    const auto wrongRoot =
        parseSuccess("<boinc_gui_rpc_request>\n<success/>\n</boinc_gui_rpc_request>\n", "project_attach");
    REQUIRE_FALSE(wrongRoot.ok());
    CHECK(wrongRoot.error().message ==
          "BOINC's reply to project_attach is not a GUI RPC reply: its root element is "
          "<boinc_gui_rpc_request>, not <boinc_gui_rpc_reply>");

    const auto empty = parseNonce("");
    REQUIRE_FALSE(empty.ok());
    CHECK_THAT(empty.error().message, Catch::StartsWith("BOINC's reply to auth1 is not well-formed XML"));

    const auto html = parseSuccess("HTTP/1.0 403 Access denied\n\nAccess denied\n", "quit");
    REQUIRE_FALSE(html.ok());
    CHECK_THAT(html.error().message, Catch::StartsWith("BOINC's reply to quit is not"));
}
