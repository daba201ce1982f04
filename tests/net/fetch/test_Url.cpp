#include "net/fetch/Url.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

using namespace nicer::net;

namespace {

Url parsedUrl(std::string_view text) {
    auto url = parseUrl(text);
    INFO(text << ": " << (url ? std::string() : url.error().message));
    REQUIRE(url.ok());
    return std::move(url).value();
}

std::string urlFailure(std::string_view text) {
    const auto url = parseUrl(text);
    INFO(text);
    REQUIRE_FALSE(url.ok());
    return url.error().message;
}

} // namespace

TEST_CASE("parseUrl splits an https URL and fills in the default port", "[Url]") {
    const auto url = parsedUrl("https://example.org/work/unit1.bin?x=1&y=2#top");
    CHECK(url.scheme == "https");
    CHECK(url.host == "example.org");
    CHECK(url.port == 443);
    CHECK(url.path == "/work/unit1.bin?x=1&y=2");
    CHECK(url.authority() == "example.org");
    CHECK(url.toString() == "https://example.org/work/unit1.bin?x=1&y=2");

    const auto http = parsedUrl("http://example.org/a");
    CHECK(http.scheme == "http");
    CHECK(http.port == 80);
}

TEST_CASE("parseUrl keeps an explicit port and shows it in the authority unless it is the default", "[Url]") {
    const auto custom = parsedUrl("http://localhost:8080/f");
    CHECK(custom.port == 8080);
    CHECK(custom.authority() == "localhost:8080");
    CHECK(custom.toString() == "http://localhost:8080/f");

    const auto explicitDefault = parsedUrl("https://example.org:443/f");
    CHECK(explicitDefault.port == 443);
    CHECK(explicitDefault.authority() == "example.org");

    // 443 is not the default for http, so it stays.
    CHECK(parsedUrl("http://example.org:443/").authority() == "example.org:443");
    CHECK(parsedUrl("http://h:65535/").port == 65535);
    CHECK(parsedUrl("http://h:1/").port == 1);

    // An empty port means the default (RFC 3986 3.2.3).
    CHECK(parsedUrl("https://example.org:/f").port == 443);
}

TEST_CASE("parseUrl lower-cases scheme and host but leaves the path alone", "[Url]") {
    const auto url = parsedUrl("HTTPS://Example.ORG/Some/Path?Q=A");
    CHECK(url.scheme == "https");
    CHECK(url.host == "example.org");
    CHECK(url.path == "/Some/Path?Q=A");
}

TEST_CASE("parseUrl gives at least / as the path", "[Url]") {
    CHECK(parsedUrl("http://example.org").path == "/");
    CHECK(parsedUrl("http://example.org#frag").path == "/");
    CHECK(parsedUrl("http://example.org?q=1").path == "/?q=1");
    CHECK(parsedUrl("http://example.org:81?q=1").path == "/?q=1");
    CHECK(parsedUrl("http://example.org/").path == "/");
}

TEST_CASE("parseUrl takes IPv4 and bracketed IPv6 literals", "[Url]") {
    const auto v4 = parsedUrl("http://192.0.2.7:8000/x");
    CHECK(v4.host == "192.0.2.7");
    CHECK(v4.authority() == "192.0.2.7:8000");

    const auto v6 = parsedUrl("https://[2001:DB8::1]:8443/x");
    CHECK(v6.host == "2001:db8::1");
    CHECK(v6.port == 8443);
    CHECK(v6.authority() == "[2001:db8::1]:8443");
    CHECK(v6.toString() == "https://[2001:db8::1]:8443/x");

    const auto loopback = parsedUrl("http://[::1]/");
    CHECK(loopback.host == "::1");
    CHECK(loopback.port == 80);
    CHECK(loopback.authority() == "[::1]");
    CHECK(parsedUrl("http://[::ffff:192.0.2.1]/").host == "::ffff:192.0.2.1");
}

TEST_CASE("parseUrl percent-encodes bytes outside ASCII in the path and keeps escapes as written", "[Url]") {
    CHECK(parsedUrl("http://h/caf\xc3\xa9?q=\xff").path == "/caf%C3%A9?q=%FF");
    CHECK(parsedUrl("http://h/a%20b/%2e%2e/c").path == "/a%20b/%2e%2e/c");
}

TEST_CASE("parseUrl percent-encodes the characters RFC 3986 allows nowhere, as a browser sends them",
          "[Url]") {
    CHECK(parsedUrl("http://h/a|b/{c}?x=<y>&z=\"^`\\").path == "/a%7Cb/%7Bc%7D?x=%3Cy%3E&z=%22%5E%60%5C");
}

// liburiparser reads the rest strictly: a '%' that starts no escape, or a bracket outside an IPv6 literal, is
// refused, naming where, instead of being sent to a server that would answer 400.
TEST_CASE("parseUrl refuses a broken escape or a bracket in the path, naming where", "[Url]") {
    CHECK_THAT(urlFailure("http://h/a%zz"), Catch::Contains("position 11 ('%zz')") && Catch::Contains("%25"));
    CHECK_THAT(urlFailure("http://h/a%2"), Catch::Contains("%25"));
    CHECK_THAT(urlFailure("http://h/a[1]"), Catch::Contains("'[1]'"));
}

TEST_CASE("parseUrl refuses user names and passwords and says why", "[Url]") {
    for (const auto* text : {"https://user:secret@example.org/f", "http://user@example.org/", "http://@h/"}) {
        const auto message = urlFailure(text);
        CHECK_THAT(message, Catch::Contains("password") && Catch::Contains("'@'"));
    }
}

TEST_CASE("parseUrl refuses schemes other than http and https, naming the scheme", "[Url]") {
    const auto scheme = GENERATE(as<std::string>{}, "ftp", "file", "magnet", "ws", "h2", "httpx");
    const auto message = urlFailure(scheme + "://example.org/f");
    CHECK_THAT(message, Catch::Contains("'" + scheme + "'") && Catch::Contains("http://"));
}

TEST_CASE("parseUrl refuses text that is not an absolute URL", "[Url]") {
    for (const auto* text :
         {"", "example.org/f", "/f", "http:/example.org/f", "http:example.org", "mailto:x@y"}) {
        CHECK_THAT(urlFailure(text), Catch::Contains("absolute"));
    }
}

TEST_CASE("parseUrl refuses an empty or malformed host", "[Url]") {
    CHECK_THAT(urlFailure("http:///f"), Catch::Contains("no host"));
    CHECK_THAT(urlFailure("http://:80/f"), Catch::Contains("no host"));
    CHECK_THAT(urlFailure("https://"), Catch::Contains("no host"));
    CHECK_THAT(urlFailure("http://exa%6dple.org/"), Catch::Contains("host"));
    CHECK_THAT(urlFailure("http://b\xc3\xbc"
                          "cher.example/"),
               Catch::Contains("punycode"));
    CHECK_THAT(urlFailure("http://[::1/"), Catch::Contains("']'"));
    CHECK_THAT(urlFailure("http://[]/"), Catch::Contains("IPv6"));
    CHECK_THAT(urlFailure("http://[fe80::1%25eth0]/"), Catch::Contains("IPv6"));
    CHECK_THAT(urlFailure("http://[example.org]/"), Catch::Contains("IPv6"));
    CHECK_THAT(urlFailure("http://[::1]x/"), Catch::Contains("after the IPv6"));
}

TEST_CASE("parseUrl refuses a bad port, naming it", "[Url]") {
    const auto port = GENERATE(as<std::string>{}, "0", "65536", "99999999999", "-1", "+80", "8o", "80:81");
    CHECK_THAT(urlFailure("http://example.org:" + port + "/f"), Catch::Contains("'" + port + "'"));
    CHECK_THAT(urlFailure("http://[::1]:" + port + "/f"), Catch::Contains("'" + port + "'"));
}

TEST_CASE("parseUrl refuses spaces and control characters anywhere", "[Url]") {
    for (const std::string text : {"http://example.org/a b", " http://example.org/", "http://example.org/\t",
                                   "http://exa mple.org/", "http://example.org/a\nb", "http://h/\x7f"}) {
        CHECK_THAT(urlFailure(text), Catch::Contains("%20"));
    }
    CHECK_FALSE(parseUrl(std::string("http://h/a\0b", 12)).ok());
}

TEST_CASE("resolveUrl follows RFC 3986's reference resolution examples", "[Url]") {
    const auto base = parsedUrl("http://a/b/c/d;p?q");
    // RFC 3986 section 5.4.1 (normal) and 5.4.2 (abnormal), the http ones.
    const std::pair<const char*, const char*> examples[] = {
        {"g", "http://a/b/c/g"},      {"./g", "http://a/b/c/g"},
        {"g/", "http://a/b/c/g/"},    {"/g", "http://a/g"},
        {"//g", "http://g/"},         {"?y", "http://a/b/c/d;p?y"},
        {"g?y", "http://a/b/c/g?y"},  {"#s", "http://a/b/c/d;p?q"},
        {"g#s", "http://a/b/c/g"},    {";x", "http://a/b/c/;x"},
        {"", "http://a/b/c/d;p?q"},   {".", "http://a/b/c/"},
        {"./", "http://a/b/c/"},      {"..", "http://a/b/"},
        {"../", "http://a/b/"},       {"../g", "http://a/b/g"},
        {"../..", "http://a/"},       {"../../g", "http://a/g"},
        {"../../../g", "http://a/g"}, {"/./g", "http://a/g"},
        {"/../g", "http://a/g"},      {"g.", "http://a/b/c/g."},
        {"..g", "http://a/b/c/..g"},  {"./../g", "http://a/b/g"},
        {"./g/.", "http://a/b/c/g/"}, {"g/./h", "http://a/b/c/g/h"},
        {"g/../h", "http://a/b/c/h"}, {"g;x=1/../y", "http://a/b/c/y"},
    };
    for (const auto& [reference, expected] : examples) {
        INFO(reference);
        const auto resolved = resolveUrl(base, reference);
        REQUIRE(resolved.ok());
        CHECK(resolved->toString() == expected);
    }
}

TEST_CASE("resolveUrl takes absolute URLs as they are and keeps the base's scheme and port", "[Url]") {
    const auto base = parsedUrl("https://example.org:8443/work/unit.bin");
    CHECK(resolveUrl(base, "http://mirror.example/u.bin")->toString() == "http://mirror.example/u.bin");
    CHECK(resolveUrl(base, "//cdn.example/u.bin")->toString() == "https://cdn.example/u.bin");
    CHECK(resolveUrl(base, "/other/u.bin")->toString() == "https://example.org:8443/other/u.bin");
    CHECK(resolveUrl(base, "u2.bin")->toString() == "https://example.org:8443/work/u2.bin");
    CHECK(resolveUrl(base, "../caf\xc3\xa9|1.bin")->toString() ==
          "https://example.org:8443/caf%C3%A9%7C1.bin");
}

TEST_CASE("resolveUrl keeps an IPv6 host as written, so that the origin stays the same", "[Url]") {
    // Found by tests/fuzz/fuzz_Url: liburiparser wrote the address out in full, [0000:...:0001], so a
    // redirect on the same server named another origin (another connection, another :authority).
    const auto base = parsedUrl("http://[::1]:8080/dir/file");
    CHECK(resolveUrl(base, "other")->toString() == "http://[::1]:8080/dir/other");
    CHECK(*resolveUrl(base, "http://[::1]:8080/path?q#frag") == *parseUrl("http://[::1]:8080/path?q"));
    CHECK(resolveUrl(base, "//[FE80::A]/x")->toString() == "http://[fe80::a]/x");
    CHECK(resolveUrl(*parseUrl("https://example.org/"), "http://[::ffff:1.2.3.4]/a")->host ==
          "::ffff:1.2.3.4");
}

TEST_CASE("resolveUrl refuses what is not an http(s) URL, saying why", "[Url]") {
    const auto base = parsedUrl("https://example.org/work/unit.bin");
    const auto ftp = resolveUrl(base, "ftp://example.org/u.bin");
    REQUIRE_FALSE(ftp.ok());
    CHECK_THAT(ftp.error().message, Catch::Contains("'ftp' is not supported"));
    const auto mail = resolveUrl(base, "mailto:someone@example.org");
    REQUIRE_FALSE(mail.ok());
    CHECK_THAT(mail.error().message, Catch::Contains("is not an http:// or https:// URL"));
    const auto relativeScheme = resolveUrl(base, "https:u.bin");
    REQUIRE_FALSE(relativeScheme.ok());
    CHECK_THAT(relativeScheme.error().message, Catch::Contains("is not an http:// or https:// URL"));
    const auto broken = resolveUrl(base, "/a%zz");
    REQUIRE_FALSE(broken.ok());
    CHECK_THAT(broken.error().message, Catch::Contains("%25"));
    const auto spaced = resolveUrl(base, "/a file.bin");
    REQUIRE_FALSE(spaced.ok());
    CHECK_THAT(spaced.error().message, Catch::Contains("space"));
}

TEST_CASE("urlScheme names the scheme in lower case, or nothing", "[Url]") {
    CHECK(urlScheme("HTTPS://example.org/f") == "https");
    CHECK(urlScheme("ftp://example.org/f") == "ftp");
    CHECK(urlScheme("magnet:?xt=urn:btih:abc") == "magnet");
    CHECK(urlScheme("/relative/path").empty());
    CHECK(urlScheme("example.org/f").empty());
    CHECK(urlScheme("http://example.org/a b").empty());
    CHECK(urlScheme("http://[::1/").empty());
}
