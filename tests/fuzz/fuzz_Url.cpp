// URLs (net/fetch/Url, liburiparser) and download names (net/fetch/SafePath). The input holds a URL, a
// reference to resolve against it (a Location header) and a name from a manifest. A URL that parses is an
// absolute http(s) URL whose parts an HTTP/2 request can carry and that reads back from its own text; a
// resolved Location is such a URL too; a name that passes stays inside the download directory.

#include "FuzzSupport.h"
#include "net/fetch/SafePath.h"
#include "net/fetch/Url.h"
#include "util/Text.h"

#include <algorithm>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>

using namespace nicer;

namespace {

bool printableAscii(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

void checkUrl(const net::Url& url) {
    FUZZ_CHECK(url.scheme == "http" || url.scheme == "https");
    FUZZ_CHECK(!url.host.empty());
    FUZZ_CHECK(text::toLowerAscii(url.host) == url.host);
    FUZZ_CHECK(url.port != 0);
    FUZZ_CHECK(url.path.starts_with('/'));
    FUZZ_CHECK(url.path.find('#') == std::string::npos);
    FUZZ_CHECK(printableAscii(url.host) && printableAscii(url.path) && printableAscii(url.authority()));
    const auto again = net::parseUrl(url.toString());
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(*again == url);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::string text = input.ConsumeRandomLengthString(512);
    const std::string reference = input.ConsumeRandomLengthString(512);
    const std::string name = input.ConsumeRemainingBytesAsString();

    const auto url = net::parseUrl(text);
    const std::string scheme = net::urlScheme(text);
    FUZZ_CHECK(text::toLowerAscii(scheme) == scheme);
    if (url) {
        checkUrl(*url);
        FUZZ_CHECK(scheme == url->scheme);
    }
    const net::Url base = url ? *url : net::Url{"https", "example.org", 443, "/dir/file?q"};
    if (const auto resolved = net::resolveUrl(base, reference)) {
        checkUrl(*resolved);
        // An absolute URL resolves to itself, give or take dot segments, which resolution removes.
        if (const auto absolute = net::parseUrl(reference);
            absolute && absolute->path.find("/.") == std::string::npos) {
            FUZZ_CHECK(*resolved == *absolute);
        }
    }

    const std::filesystem::path dir = "/downloads/work";
    if (const auto target = net::safeTargetPath(dir, name)) {
        const auto relative = target->lexically_relative(dir);
        FUZZ_CHECK(!relative.empty() && *relative.begin() != ".." && relative != ".");
        FUZZ_CHECK(net::partialPath(*target).filename().string().ends_with(".part"));
    }
    return 0;
}
