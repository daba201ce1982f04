#include "net/fetch/Metalink.h"

#include "net/fetch/Sha256.h"
#include "net/fetch/Url.h"
#include "util/Text.h"
#include "util/TextFile.h"

#include <pugixml.hpp>

#include <algorithm>
#include <set>

namespace nicer::net {

namespace {

constexpr std::string_view kNamespace = "urn:ietf:params:xml:ns:metalink";
constexpr std::string_view kMetalink3Namespace = "http://www.metalinker.org/";

std::string_view localName(const pugi::xml_node& node) {
    const std::string_view name = node.name();
    const auto colon = name.find(':');
    return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// pugixml does not do namespaces: find the xmlns declaration in scope for the element's prefix.
std::string_view namespaceOf(const pugi::xml_node& node) {
    const std::string_view name = node.name();
    const auto colon = name.find(':');
    const std::string declaration =
        colon == std::string_view::npos ? "xmlns" : "xmlns:" + std::string(name.substr(0, colon));
    for (auto scope = node; scope; scope = scope.parent()) {
        if (const auto attribute = scope.attribute(declaration.c_str())) {
            return attribute.value();
        }
    }
    return {};
}

bool isMetalinkElement(const pugi::xml_node& node, std::string_view name) {
    return node.type() == pugi::node_element && localName(node) == name && namespaceOf(node) == kNamespace;
}

std::string_view textOf(const pugi::xml_node& node) {
    return text::trim(node.text().get());
}

/// Line and column of byte @p offset, which people can find in an editor.
std::string position(std::string_view xml, std::size_t offset) {
    offset = std::min(offset, xml.size());
    const auto before = xml.substr(0, offset);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto lineStart = before.rfind('\n');
    const auto column = offset - (lineStart == std::string_view::npos ? 0 : lineStart + 1) + 1;
    return "byte offset " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
           std::to_string(column) + ")";
}

Error fileError(const std::string& name, const std::string& what) {
    return Error{"file '" + name + "' in the Metalink " + what};
}

Result<MetalinkFile> parseFile(const pugi::xml_node& node, std::size_t number) {
    MetalinkFile file;
    const auto nameAttribute = node.attribute("name");
    file.name = nameAttribute.value();
    if (!nameAttribute || file.name.empty()) {
        return Error{"<file> number " + std::to_string(number) +
                     " in the Metalink has no name attribute; every file needs one, e.g. "
                     "<file name=\"data/part1.bin\">"};
    }

    bool sawSize = false;
    for (const auto child : node.children()) {
        if (isMetalinkElement(child, "size")) {
            if (sawSize) {
                return fileError(file.name, "has more than one <size>; keep one");
            }
            sawSize = true;
            const auto sizeText = textOf(child);
            std::uint64_t size = 0;
            // parseNumber takes no sign for unsigned types, so "-1" and "+1" fail here as they should.
            if (!text::parseNumber(sizeText, size)) {
                return fileError(file.name, "has <size>" + std::string(sizeText) +
                                                "</size>; the size must be a whole number of bytes, e.g. "
                                                "<size>1048576</size>");
            }
            file.size = size;
        } else if (isMetalinkElement(child, "hash")) {
            if (text::toLowerAscii(child.attribute("type").value()) != "sha-256") {
                continue; // md5, sha-1, sha-512 ...: not used, so not checked
            }
            const auto hash = textOf(child);
            if (!isSha256Hex(hash)) {
                return fileError(file.name, "has a sha-256 hash '" + std::string(hash) +
                                                "' that is not 64 hex digits; copy it again from the source, "
                                                "e.g. from the output of sha256sum");
            }
            const auto hex = text::toLowerAscii(hash);
            if (!file.sha256.empty() && file.sha256 != hex) {
                return fileError(file.name, "has two different sha-256 hashes; keep the right one");
            }
            file.sha256 = hex;
        } else if (isMetalinkElement(child, "url")) {
            const std::string url(textOf(child));
            const auto scheme = urlScheme(url);
            if (scheme != "http" && scheme != "https") {
                continue; // ftp, magnet, ...: other clients may use them, nicer speaks HTTP only
            }
            if (const auto parsed = parseUrl(url); !parsed) {
                return fileError(file.name, "has a bad mirror: " + parsed.error().message);
            }
            Mirror mirror{url, Mirror::kNoPriority};
            if (const auto priority = child.attribute("priority")) {
                const std::string_view priorityText = text::trim(priority.value());
                if (!text::parseNumber(priorityText, mirror.priority) || mirror.priority < 1 ||
                    mirror.priority > Mirror::kNoPriority) {
                    return fileError(file.name, "has priority=\"" + std::string(priorityText) +
                                                    "\" on mirror " + url +
                                                    "; a priority is a whole number from 1 (most preferred) "
                                                    "to 999999");
                }
            }
            file.mirrors.push_back(std::move(mirror));
        }
    }

    if (file.sha256.empty()) {
        return fileError(file.name, "has no SHA-256 hash, so the download could not be verified; add "
                                    "<hash type=\"sha-256\">...</hash> (e.g. from sha256sum)");
    }
    if (file.mirrors.empty()) {
        return fileError(file.name,
                         "has no http:// or https:// <url>; add at least one (other schemes such as "
                         "ftp:// are not supported)");
    }
    std::stable_sort(file.mirrors.begin(), file.mirrors.end(),
                     [](const Mirror& a, const Mirror& b) { return a.priority < b.priority; });
    return file;
}

} // namespace

Result<std::vector<MetalinkFile>> parseMetalink(std::string_view xml) {
    pugi::xml_document document;
    const auto parsed = document.load_buffer(xml.data(), xml.size());
    if (!parsed) {
        return Error{"the Metalink is not well-formed XML: " + std::string(parsed.description()) + " at " +
                     position(xml, static_cast<std::size_t>(parsed.offset))};
    }

    const auto root = document.document_element();
    const auto rootNamespace = namespaceOf(root);
    if (localName(root) != "metalink" || rootNamespace != kNamespace) {
        const std::string found =
            "the root element is <" + std::string(root.name()) + ">" +
            (rootNamespace.empty() ? std::string(" with no namespace")
                                   : " in namespace '" + std::string(rootNamespace) + "'");
        const std::string hint = rootNamespace == kMetalink3Namespace
                                     ? "; this looks like Metalink 3, which is not supported: convert it to "
                                       "Metalink 4 or ask the publisher for a .meta4 file"
                                     : "";
        return Error{"not a Metalink 4 document (RFC 5854): " + found +
                     ", but it must be <metalink xmlns=\"" + std::string(kNamespace) + "\">" + hint};
    }

    std::vector<MetalinkFile> files;
    std::set<std::string> names;
    std::size_t number = 0;
    for (const auto child : root.children()) {
        if (!isMetalinkElement(child, "file")) {
            continue; // <published>, <generator>, extensions: nothing to download
        }
        auto file = parseFile(child, ++number);
        if (!file) {
            return file.error();
        }
        if (!names.insert(file->name).second) {
            return fileError(file->name, "is listed twice; each name may appear once, since both would be "
                                         "written to the same place");
        }
        files.push_back(std::move(file).value());
    }
    if (files.empty()) {
        return Error{
            "the Metalink lists no <file>, so there is nothing to download; add a <file name=\"...\"> "
            "with a sha-256 <hash> and a <url>"};
    }
    return files;
}

Result<std::vector<MetalinkFile>> readMetalink(const std::filesystem::path& path) {
    const auto xml = readTextFile(path);
    if (!xml) {
        return Error{xml.error().message + "; check the path of the Metalink file"};
    }
    auto files = parseMetalink(*xml);
    if (!files) {
        return Error{path.string() + ": " + files.error().message};
    }
    return files;
}

} // namespace nicer::net
