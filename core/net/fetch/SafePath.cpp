#include "net/fetch/SafePath.h"

#include "util/Text.h"

#include <span>
#include <string>

namespace nicer::net {

namespace {

constexpr std::size_t kMaxComponent = 255; // NAME_MAX of every Linux file system we write to
// The last component gets kPartialSuffix while downloading, and that name must fit too.
constexpr std::size_t kMaxFileComponent = kMaxComponent - kPartialSuffix.size();

Error nameError(std::string_view name, const std::string& what) {
    std::string shown;
    for (const char c : name) { // a name with control characters must not garble the message
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            shown += "\\x" + text::lowerHex(std::span(&byte, 1));
        } else {
            shown += c;
        }
    }
    return Error{"file name '" + shown + "' from the manifest " + what +
                 "; fix the manifest (names are relative paths such as \"dir/file.dat\")"};
}

} // namespace

Result<std::filesystem::path> safeTargetPath(const std::filesystem::path& dir, std::string_view name) {
    if (name.empty()) {
        return nameError(name, "is empty");
    }
    for (const char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            return nameError(name, "contains a control character");
        }
        if (c == '\\') {
            // On Windows a backslash separates directories, so "..\\x" would mean a traversal there.
            return nameError(name, "contains a backslash; separate directories with '/'");
        }
    }
    if (name.front() == '/') {
        return nameError(name, "is an absolute path; files may only be written below the download directory");
    }
    const auto components = text::split(name, '/');
    for (std::size_t i = 0; i < components.size(); ++i) {
        const auto component = components[i];
        const bool isFile = i + 1 == components.size();
        if (component.empty()) {
            return nameError(name, "has an empty path component ('//' or a trailing '/')");
        }
        if (component == "." || component == "..") {
            return nameError(name, "contains a '" + std::string(component) +
                                       "' component; files may only be written below the download directory");
        }
        const auto limit = isFile ? kMaxFileComponent : kMaxComponent;
        if (component.size() > limit) {
            return nameError(name, "has a component of " + std::to_string(component.size()) +
                                       " bytes; at most " + std::to_string(limit) + " are possible" +
                                       (isFile ? " for a file name (the download adds \".part\")" : ""));
        }
        // "a" downloads to "a.part", so a manifest entry "a.part" or a directory "a.part/" would collide.
        if (component.ends_with(kPartialSuffix)) {
            return nameError(name,
                             "ends a component with \".part\", which is reserved for partial downloads");
        }
    }
    return (dir / std::filesystem::path(name)).lexically_normal();
}

std::filesystem::path partialPath(const std::filesystem::path& target) {
    auto partial = target;
    partial += kPartialSuffix;
    return partial;
}

} // namespace nicer::net
