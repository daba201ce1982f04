// Notices' text made plain: BOINC's HTML, entities and translation markers.

#include "boinc/NoticeText.h"

#include <catch2/catch.hpp>

using namespace nicer::boinc;

TEST_CASE("htmlToPlainText drops markup, decodes entities and tidies blanks", "[NoticeText]") {
    CHECK(htmlToPlainText("plain") == "plain");
    CHECK(htmlToPlainText("  a \t  b  ") == "a b");
    CHECK(htmlToPlainText("1 < 2 and 3 > 2") == "1 < 2 and 3 > 2");
    CHECK(htmlToPlainText("&lt;tag&gt; &#39;q&#39; &#x263A; &unknown; & alone") ==
          "<tag> 'q' \u263A &unknown; & alone");
    CHECK(htmlToPlainText("<ul><li>one</li><li>two</li></ul>") == "one\ntwo");
    CHECK(htmlToPlainText("a<br>b<br/><br/><br/>c") == "a\nb\n\nc");
    CHECK(htmlToPlainText("<style>p { color: red }</style><script>alert(1)</script>text") == "text");
    CHECK(htmlToPlainText("<!-- note -->x") == "x");
    CHECK(htmlToPlainText("").empty());
}

TEST_CASE("stripTranslation removes the client's translation markers", "[NoticeText]") {
    CHECK(stripTranslation(
              "_(\"BOINC can't access Internet - check network connection or proxy configuration.\")") ==
          "BOINC can't access Internet - check network connection or proxy configuration.");
    CHECK(stripTranslation("_(\"Message from server\"): _(\"Project is down\")") ==
          "Message from server: Project is down");
    CHECK(stripTranslation("plain (\"quoted\")") == "plain (\"quoted\")");
}
