// Metalink 4 manifests (net/fetch/Metalink): parseMetalink on any bytes. What parses lists files with unique
// non-empty names, a sha-256 of 64 lower-case hex digits and at least one http(s) mirror that parseUrl
// accepts, mirrors by priority within 1..999999; each name either is refused by safeTargetPath or stays
// inside the download directory.

#include "FuzzSupport.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/SafePath.h"
#include "net/fetch/Url.h"

#include <algorithm>
#include <set>
#include <string>

using namespace nicer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto files = net::parseMetalink(fuzz::asText(data, size));
    if (!files) {
        FUZZ_CHECK(!files.error().message.empty());
        return 0;
    }
    FUZZ_CHECK(!files->empty());
    std::set<std::string> names;
    const std::filesystem::path dir = "/downloads";
    for (const auto& file : *files) {
        FUZZ_CHECK(!file.name.empty());
        FUZZ_CHECK(names.insert(file.name).second);
        FUZZ_CHECK(file.sha256.size() == 64);
        FUZZ_CHECK(std::all_of(file.sha256.begin(), file.sha256.end(),
                               [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }));
        FUZZ_CHECK(!file.mirrors.empty());
        for (const auto& mirror : file.mirrors) {
            FUZZ_CHECK(mirror.priority >= 1 && mirror.priority <= net::Mirror::kNoPriority);
            const auto url = net::parseUrl(mirror.url);
            FUZZ_CHECK(url.ok());
            FUZZ_CHECK(url->scheme == "http" || url->scheme == "https");
        }
        FUZZ_CHECK(std::is_sorted(file.mirrors.begin(), file.mirrors.end(),
                                  [](const auto& a, const auto& b) { return a.priority < b.priority; }));
        if (const auto target = net::safeTargetPath(dir, file.name)) {
            const auto relative = target->lexically_relative(dir);
            FUZZ_CHECK(!relative.empty() && *relative.begin() != ".." && relative != ".");
        }
    }
    return 0;
}
