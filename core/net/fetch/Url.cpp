#include "net/fetch/Url.h"

#include "util/Text.h"

#include <algorithm>

namespace nicer::net {

namespace {

constexpr std::uint16_t kHttpPort = 80;
constexpr std::uint16_t kHttpsPort = 443;

std::uint16_t defaultPort(std::string_view scheme) {
    return scheme == "https" ? kHttpsPort : kHttpPort;
}

char toLower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), toLower);
    return out;
}

bool isAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A registered name or IPv4 address. Percent-encoded and international names are refused rather than guessed
// at: the name goes to the resolver, to SNI and to certificate checks, which all want plain ASCII.
bool isHostChar(char c) {
    return isAlnum(c) || c == '-' || c == '.' || c == '_';
}

bool isIpv6Char(char c) {
    return isHex(c) || c == ':' || c == '.';
}

Error urlError(std::string_view text, const std::string& what) {
    return Error{"URL '" + std::string(text) + "': " + what};
}

// RFC 3986 3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":". The length of "scheme:", or 0 when the
// reference starts with no scheme (and is relative).
std::size_t schemeLength(std::string_view reference) {
    if (reference.empty() ||
        !((reference[0] >= 'a' && reference[0] <= 'z') || (reference[0] >= 'A' && reference[0] <= 'Z'))) {
        return 0;
    }
    for (std::size_t i = 1; i < reference.size(); ++i) {
        const char c = reference[i];
        if (c == ':') {
            return i + 1;
        }
        if (!isAlnum(c) && c != '+' && c != '-' && c != '.') {
            return 0;
        }
    }
    return 0;
}

// RFC 3986 5.2.4, on a path without its query.
std::string removeDotSegments(std::string_view input) {
    std::string output;
    while (!input.empty()) {
        if (input.starts_with("../")) {
            input.remove_prefix(3);
        } else if (input.starts_with("./")) {
            input.remove_prefix(2);
        } else if (input.starts_with("/./")) {
            input.remove_prefix(2);
        } else if (input == "/.") {
            input = "/";
        } else if (input.starts_with("/../") || input == "/..") {
            input = input.size() == 3 ? std::string_view("/") : input.substr(3);
            const auto slash = output.rfind('/');
            output.erase(slash == std::string::npos ? 0 : slash);
        } else if (input == "." || input == "..") {
            input = {};
        } else {
            const auto next = input.find('/', 1);
            const auto segment = input.substr(0, next);
            output += segment;
            input.remove_prefix(segment.size());
        }
    }
    return output;
}

} // namespace

std::string Url::authority() const {
    std::string out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (port != defaultPort(scheme)) {
        out += ":" + std::to_string(port);
    }
    return out;
}

std::string Url::toString() const {
    return scheme + "://" + authority() + path;
}

Result<Url> parseUrl(std::string_view text) {
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte == 0x7f) {
            return urlError(text,
                            "contains a space or control character; percent-encode it (a space is %20)");
        }
    }

    const auto schemeEnd = text.find("://");
    if (schemeEnd == std::string_view::npos) {
        return urlError(text, "is not an absolute URL; write it as http://host/path or https://host/path");
    }
    Url url;
    url.scheme = lowered(text.substr(0, schemeEnd));
    if (url.scheme != "http" && url.scheme != "https") {
        return urlError(text, "the scheme '" + url.scheme + "' is not supported; use http:// or https://");
    }

    auto rest = text.substr(schemeEnd + 3);
    const auto authorityEnd = std::min(rest.find_first_of("/?#"), rest.size());
    const auto authority = rest.substr(0, authorityEnd);
    rest.remove_prefix(authorityEnd);

    if (authority.find('@') != std::string_view::npos) {
        return urlError(text, "contains a user name or password (before '@'); credentials in URLs are not "
                              "supported because they would travel to every mirror and end up in logs: "
                              "remove the part up to '@'");
    }

    std::string_view host;
    std::string_view portText;
    bool hasPort = false;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) {
            return urlError(text, "the IPv6 address has no closing ']'");
        }
        host = authority.substr(1, close - 1);
        if (host.empty() || !std::all_of(host.begin(), host.end(), isIpv6Char) ||
            host.find(':') == std::string_view::npos) {
            return urlError(text, "'[" + std::string(host) +
                                      "]' is not an IPv6 address (zone identifiers are not supported)");
        }
        const auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                return urlError(text, "unexpected '" + std::string(after) + "' after the IPv6 address");
            }
            hasPort = true;
            portText = after.substr(1);
        }
    } else {
        const auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            hasPort = true;
            portText = authority.substr(colon + 1);
        }
        if (host.empty()) {
            return urlError(text, "has no host name");
        }
        if (!std::all_of(host.begin(), host.end(), isHostChar)) {
            return urlError(text, "the host '" + std::string(host) +
                                      "' may only contain letters, digits, '-', '_' and '.'; write an "
                                      "international name in its xn-- (punycode) form");
        }
    }
    url.host = lowered(host);

    url.port = defaultPort(url.scheme);
    // RFC 3986 allows an empty port ("host:/") and means the default by it.
    if (hasPort && !portText.empty()) {
        std::uint16_t port = 0;
        if (!text::parseNumber(portText, port) || port == 0) {
            return urlError(text, "the port '" + std::string(portText) + "' is not a number from 1 to 65535");
        }
        url.port = port;
    }

    const auto fragment = rest.find('#');
    rest = rest.substr(0, fragment); // the fragment is for the client, never sent
    url.path.clear();
    if (rest.empty() || rest.front() == '?') {
        url.path = "/";
    }
    // HTTP/2 header values must be ASCII; browsers send such bytes percent-encoded too.
    static constexpr char kHexDigits[] = "0123456789ABCDEF";
    for (const char c : rest) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80) {
            url.path += '%';
            url.path += kHexDigits[byte >> 4];
            url.path += kHexDigits[byte & 0x0f];
        } else {
            url.path += c;
        }
    }
    return url;
}

Result<Url> resolveUrl(const Url& base, std::string_view reference) {
    reference = reference.substr(0, reference.find('#'));
    if (reference.empty()) {
        return base;
    }
    if (const std::size_t scheme = schemeLength(reference); scheme > 0) {
        if (reference.substr(scheme).starts_with("//")) {
            return parseUrl(reference); // it names the scheme it wants refused, if not http(s)
        }
        return urlError(reference, "is not an http:// or https:// URL");
    }
    if (reference.starts_with("//")) {
        return parseUrl(base.scheme + ":" + std::string(reference));
    }
    const std::string origin = base.scheme + "://" + base.authority();
    const std::string_view basePath = std::string_view(base.path).substr(0, base.path.find('?'));
    if (reference.front() == '?') {
        return parseUrl(origin + std::string(basePath) + std::string(reference));
    }
    const auto queryStart = std::min(reference.find('?'), reference.size());
    std::string path(reference.substr(0, queryStart));
    if (!path.starts_with('/')) {
        // Merge (5.2.3): the base path up to its last '/', then the reference.
        const auto slash = basePath.rfind('/');
        path = std::string(basePath.substr(0, slash == std::string_view::npos ? 0 : slash + 1)) + path;
        if (!path.starts_with('/')) {
            path.insert(0, "/");
        }
    }
    return parseUrl(origin + removeDotSegments(path) + std::string(reference.substr(queryStart)));
}

} // namespace nicer::net
