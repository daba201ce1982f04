#include "net/fetch/Metalink.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nicer::net;

namespace {

constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

std::filesystem::path fixture(const std::string& name) {
    return std::filesystem::path(NICER_TEST_DATA) / "metalink" / name;
}

std::string document(const std::string& body) {
    return "<?xml version=\"1.0\"?>\n<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n" + body +
           "</metalink>\n";
}

/// A <file> with a good hash and URL unless @p body brings its own.
std::string fileElement(const std::string& name, const std::string& body = "") {
    const std::string contents = body.empty() ? "<hash type=\"sha-256\">" + std::string(kAbc) +
                                                    "</hash><url>http://example.org/x</url>"
                                              : body;
    return "<file name=\"" + name + "\">" + contents + "</file>\n";
}

std::vector<MetalinkFile> parsed(const std::string& xml) {
    auto files = parseMetalink(xml);
    INFO((files ? std::string() : files.error().message));
    REQUIRE(files.ok());
    return std::move(files).value();
}

std::string failure(const std::string& xml) {
    const auto files = parseMetalink(xml);
    INFO(xml);
    REQUIRE_FALSE(files.ok());
    return files.error().message;
}

} // namespace

TEST_CASE("readMetalink reads every file with its size, hash and http mirrors by priority", "[Metalink]") {
    const auto files = readMetalink(fixture("valid.meta4"));
    INFO((files ? std::string() : files.error().message));
    REQUIRE(files.ok());
    REQUIRE(files->size() == 3);

    const auto& small = files->at(0);
    CHECK(small.name == "units/unit-small.bin");
    CHECK(small.size == 3u);
    CHECK(small.sha256 == kAbc); // the md5 before it is skipped
    // ftp is dropped; priority 1 first, the two 20s in manifest order, the one without a priority last.
    CHECK(small.mirrors == std::vector<Mirror>{
                               {"https://mirror-a.example.org/units/unit-small.bin", 1},
                               {"http://mirror-b.example.org/units/unit-small.bin", 20},
                               {"https://mirror-c.example.org:8443/units/unit-small.bin", 20},
                               {"https://fallback.example.org/unit-small.bin", Mirror::kNoPriority},
                           });

    const auto& large = files->at(1);
    CHECK(large.name == "unit-large.bin");
    CHECK(large.size == 1'000'000u); // surrounding white space is fine
    CHECK(large.sha256 == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CHECK(large.mirrors == std::vector<Mirror>{{"https://mirror-a.example.org/unit-large.bin", 5}});

    const auto& unsized = files->at(2);
    CHECK(unsized.name == "no size.dat");
    CHECK_FALSE(unsized.size.has_value());
    CHECK(unsized.mirrors == std::vector<Mirror>{{"http://[2001:db8::1]:8080/no%20size.dat", 999999}});
}

TEST_CASE("parseMetalink follows the namespace, not the spelling of the element names", "[Metalink]") {
    const std::string prefixed = "<ml:metalink xmlns:ml=\"urn:ietf:params:xml:ns:metalink\">"
                                 "<ml:file name=\"a\"><ml:size>7</ml:size><ml:hash type=\"sha-256\">" +
                                 std::string(kAbc) +
                                 "</ml:hash><ml:url>https://example.org/a</ml:url></ml:file></ml:metalink>";
    const auto files = parsed(prefixed);
    REQUIRE(files.size() == 1);
    CHECK(files[0].size == 7u);
    CHECK(files[0].mirrors.size() == 1);

    // Elements of other namespaces are extensions, even when their local names match.
    const auto withForeign =
        parsed(document("<x:file xmlns:x=\"urn:example\" name=\"ignored\"/>" +
                        fileElement("b", "<x:size xmlns:x=\"urn:example\">abc</x:size>"
                                         "<hash type=\"sha-256\">" +
                                             std::string(kAbc) + "</hash><url>http://e.org/b</url>")));
    REQUIRE(withForeign.size() == 1);
    CHECK(withForeign[0].name == "b");
    CHECK_FALSE(withForeign[0].size.has_value());
}

TEST_CASE("parseMetalink reads the hash type in any case and takes repeated equal hashes", "[Metalink]") {
    const auto files = parsed(document(
        fileElement("a", "<hash type=\"Sha-256\">" + std::string(kAbc) + "</hash><hash type=\"sha-256\">" +
                             std::string(kAbc) + "</hash><url>http://e.org/a</url>")));
    CHECK(files.at(0).sha256 == kAbc);
}

TEST_CASE("parseMetalink says where a document stops being XML", "[Metalink]") {
    const auto message = failure("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n  <file name=\"a\">\n"
                                 "  </fil>\n</metalink>");
    CHECK_THAT(message, Catch::Contains("not well-formed XML") && Catch::Contains("line 3"));
    CHECK_THAT(failure("not xml at all"), Catch::Contains("not well-formed XML"));
    CHECK_THAT(failure(""), Catch::Contains("byte offset 0"));

    const auto truncated = readMetalink(fixture("truncated.meta4"));
    REQUIRE_FALSE(truncated.ok());
    CHECK_THAT(truncated.error().message,
               Catch::StartsWith(fixture("truncated.meta4").string()) && Catch::Contains("well-formed"));
}

TEST_CASE("parseMetalink refuses other root elements and namespaces, naming what it found", "[Metalink]") {
    const auto noNamespace = failure("<metalink><file name=\"a\"/></metalink>");
    CHECK_THAT(noNamespace, Catch::Contains("not a Metalink 4 document (RFC 5854)") &&
                                Catch::Contains("no namespace") &&
                                Catch::Contains("urn:ietf:params:xml:ns:metalink"));

    const auto otherRoot = failure("<feed xmlns=\"http://www.w3.org/2005/Atom\"/>");
    CHECK_THAT(otherRoot, Catch::Contains("<feed>") && Catch::Contains("http://www.w3.org/2005/Atom"));

    const auto wrongName = failure("<metalink4 xmlns=\"urn:ietf:params:xml:ns:metalink\"/>");
    CHECK_THAT(wrongName, Catch::Contains("<metalink4>"));

    const auto v3 = readMetalink(fixture("metalink3.metalink"));
    REQUIRE_FALSE(v3.ok());
    CHECK_THAT(v3.error().message, Catch::Contains("not a Metalink 4 document (RFC 5854)") &&
                                       Catch::Contains("Metalink 3") && Catch::Contains(".meta4"));
}

TEST_CASE("parseMetalink refuses a document without files", "[Metalink]") {
    CHECK_THAT(failure(document("")), Catch::Contains("no <file>"));
    CHECK_THAT(failure(document("<published>2026-01-01T00:00:00Z</published>")),
               Catch::Contains("no <file>"));
}

TEST_CASE("parseMetalink wants a name on every file", "[Metalink]") {
    const std::string good = fileElement("first");
    const std::string body =
        "<hash type=\"sha-256\">" + std::string(kAbc) + "</hash><url>http://e.org/x</url>";
    CHECK_THAT(failure(document(good + "<file>" + body + "</file>")),
               Catch::Contains("number 2") && Catch::Contains("no name"));
    CHECK_THAT(failure(document("<file name=\"\">" + body + "</file>")),
               Catch::Contains("number 1") && Catch::Contains("no name"));
}

TEST_CASE("parseMetalink wants a well-formed sha-256 hash on every file", "[Metalink]") {
    const std::string url = "<url>http://e.org/x</url>";
    CHECK_THAT(failure(document(fileElement("a", url))),
               Catch::Contains("'a'") && Catch::Contains("no SHA-256"));

    const auto md5Only = readMetalink(fixture("md5-only.meta4"));
    REQUIRE_FALSE(md5Only.ok());
    CHECK_THAT(md5Only.error().message, Catch::Contains("'unit.bin'") && Catch::Contains("no SHA-256"));

    // A hash in <pieces> covers one piece, not the file.
    CHECK_THAT(failure(document(fileElement("a", "<pieces length=\"1\" type=\"sha-256\"><hash>" +
                                                     std::string(kAbc) + "</hash></pieces>" + url))),
               Catch::Contains("no SHA-256"));

    const auto bad = GENERATE(as<std::string>{}, "", "abc", std::string(63, 'a'), std::string(65, 'a'),
                              std::string(63, 'a') + "g", "sha256:" + std::string(kAbc));
    const auto message =
        failure(document(fileElement("a", "<hash type=\"sha-256\">" + bad + "</hash>" + url)));
    CHECK_THAT(message, Catch::Contains("'a'") && Catch::Contains("64 hex digits"));

    const std::string other(64, 'f');
    CHECK_THAT(
        failure(document(fileElement("a", "<hash type=\"sha-256\">" + std::string(kAbc) +
                                              "</hash><hash type=\"sha-256\">" + other + "</hash>" + url))),
        Catch::Contains("two different sha-256"));
}

TEST_CASE("parseMetalink wants an http or https mirror on every file", "[Metalink]") {
    const auto ftpOnly = readMetalink(fixture("ftp-only.meta4"));
    REQUIRE_FALSE(ftpOnly.ok());
    CHECK_THAT(ftpOnly.error().message,
               Catch::Contains("'unit.bin'") && Catch::Contains("no http:// or https://"));

    const std::string hash = "<hash type=\"sha-256\">" + std::string(kAbc) + "</hash>";
    CHECK_THAT(failure(document(fileElement("a", hash))), Catch::Contains("no http:// or https://"));
    CHECK_THAT(failure(document(fileElement("a", hash + "<url></url>"))), Catch::Contains("no http://"));
    CHECK_THAT(failure(document(fileElement("a", hash + "<url>example.org/a</url>"))),
               Catch::Contains("no http://"));

    // http URLs that cannot be used are errors, not silently skipped.
    CHECK_THAT(failure(document(fileElement("a", hash + "<url>https://user:pw@example.org/a</url>"))),
               Catch::Contains("'a'") && Catch::Contains("bad mirror") && Catch::Contains("password"));
    CHECK_THAT(failure(document(fileElement("a", hash + "<url>http://example.org:0/a</url>"))),
               Catch::Contains("port"));
}

TEST_CASE("parseMetalink refuses a priority outside 1..999999", "[Metalink]") {
    const std::string hash = "<hash type=\"sha-256\">" + std::string(kAbc) + "</hash>";
    const auto priority = GENERATE(as<std::string>{}, "0", "1000000", "-1", "high", "", "1.5", "99999999999");
    const auto message =
        failure(document(fileElement("a", hash + "<url priority=\"" + priority + "\">http://e.org/a</url>")));
    CHECK_THAT(message, Catch::Contains("priority=\"" + priority + "\"") && Catch::Contains("999999"));
}

TEST_CASE("parseMetalink refuses a size that is not a whole number of bytes", "[Metalink]") {
    const auto size =
        GENERATE(as<std::string>{}, "-1", "+5", "1.5", "1e6", "", "big", "18446744073709551616");
    const std::string rest =
        "<hash type=\"sha-256\">" + std::string(kAbc) + "</hash><url>http://e.org/a</url>";
    const auto message = failure(document(fileElement("a", "<size>" + size + "</size>" + rest)));
    CHECK_THAT(message, Catch::Contains("<size>" + size + "</size>") && Catch::Contains("whole number"));

    CHECK_THAT(failure(document(fileElement("a", "<size>1</size><size>1</size>" + rest))),
               Catch::Contains("more than one <size>"));
    CHECK(parsed(document(fileElement("a", "<size>18446744073709551615</size>" + rest)))[0].size ==
          18446744073709551615u);
    CHECK(parsed(document(fileElement("a", "<size>0</size>" + rest)))[0].size == 0u);
}

TEST_CASE("parseMetalink refuses two files with the same name", "[Metalink]") {
    const auto duplicate = readMetalink(fixture("duplicate-names.meta4"));
    REQUIRE_FALSE(duplicate.ok());
    CHECK_THAT(duplicate.error().message, Catch::Contains("'unit.bin'") && Catch::Contains("twice"));

    // Different names are fine, even when only the case differs.
    CHECK(parsed(document(fileElement("a") + fileElement("A") + fileElement("a/a"))).size() == 3);
}

TEST_CASE("readMetalink names a file it cannot read", "[Metalink]") {
    const auto missing = readMetalink(fixture("missing.meta4"));
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message, Catch::Contains("missing.meta4") && Catch::Contains("cannot open"));
}
