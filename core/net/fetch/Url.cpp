#include "net/fetch/Url.h"

#include "util/Text.h"

#include <algorithm>
#include <optional>
#include <string>
#include <uriparser/Uri.h>

namespace nicer::net {

namespace {

constexpr std::uint16_t kHttpPort = 80;
constexpr std::uint16_t kHttpsPort = 443;

std::uint16_t defaultPort(std::string_view scheme) {
    return scheme == "https" ? kHttpsPort : kHttpPort;
}

Error urlError(std::string_view text, const std::string& what) {
    return Error{"URL '" + std::string(text) + "': " + what};
}

// A UriUriA parsed by liburiparser and the text its ranges point into; the parse's memory is freed with it.
class ParsedUri {
public:
    explicit ParsedUri(std::string text)
        : m_text(std::move(text)) {
        const char* errorPos = nullptr;
        m_parsed = uriParseSingleUriExA(&m_uri, m_text.data(), m_text.data() + m_text.size(), &errorPos) ==
                   URI_SUCCESS;
        m_errorAt = errorPos != nullptr ? static_cast<std::size_t>(errorPos - m_text.data()) : 0;
    }
    ~ParsedUri() {
        if (m_parsed) { // a failed parse frees its own members
            uriFreeUriMembersA(&m_uri);
        }
    }
    ParsedUri(const ParsedUri&) = delete;
    ParsedUri& operator=(const ParsedUri&) = delete;

    bool parsed() const { return m_parsed; }
    const UriUriA& uri() const { return m_uri; }
    const std::string& text() const { return m_text; }
    /// Where liburiparser stopped, as an index into text(); meaningful when !parsed().
    std::size_t errorAt() const { return m_errorAt; }

private:
    std::string m_text;
    UriUriA m_uri{};
    bool m_parsed = false;
    std::size_t m_errorAt = 0;
};

// The result of uriAddBaseUriExA, freed with it once resolution succeeded (a failed one frees its own).
struct ResolvedUri {
    UriUriA uri{};
    bool resolved = false;
    ResolvedUri() = default;
    ~ResolvedUri() {
        if (resolved) {
            uriFreeUriMembersA(&uri);
        }
    }
    ResolvedUri(const ResolvedUri&) = delete;
    ResolvedUri& operator=(const ResolvedUri&) = delete;
};

bool present(const UriTextRangeA& range) {
    return range.first != nullptr;
}

std::string_view view(const UriTextRangeA& range) {
    return present(range)
               ? std::string_view(range.first, static_cast<std::size_t>(range.afterLast - range.first))
               : std::string_view();
}

// Policy: a space or control character is never part of a URL someone meant; say how to write it instead.
std::optional<Error> checkCharacters(std::string_view text) {
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte == 0x7f) {
            return urlError(text,
                            "contains a space or control character; percent-encode it (a space is %20)");
        }
    }
    return std::nullopt;
}

// Bytes outside ASCII, and the printable characters RFC 3986 allows nowhere, percent-encoded as a browser
// does before sending: HTTP/2 header values must be ASCII, and liburiparser then reads the rest strictly.
std::string percentEncodeStrays(std::string_view text) {
    static constexpr char kHexDigits[] = "0123456789ABCDEF";
    static constexpr std::string_view kStrays = "\"<>\\^`{|}";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80 || kStrays.find(c) != std::string_view::npos) {
            out += '%';
            out += kHexDigits[byte >> 4];
            out += kHexDigits[byte & 0x0f];
        } else {
            out += c;
        }
    }
    return out;
}

// A registered name or IPv4 address. Percent-encoded and international names are refused rather than guessed
// at: the name goes to the resolver, to SNI and to certificate checks, which all want plain ASCII.
bool isHostChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

Error hostError(std::string_view text, std::string_view host) {
    return urlError(text, "the host '" + std::string(host) +
                              "' may only contain letters, digits, '-', '_' and '.'; write an international "
                              "name in its xn-- (punycode) form");
}

Error portError(std::string_view text, std::string_view port) {
    return urlError(text, "the port '" + std::string(port) + "' is not a number from 1 to 65535");
}

Error ipv6Error(std::string_view text, std::string_view literal) {
    return urlError(text, "'[" + std::string(literal) +
                              "]' is not an IPv6 address (zone identifiers are not supported)");
}

// liburiparser's "syntax error at this position", told in terms of the part of the URL it falls in.
Error syntaxError(std::string_view text, const ParsedUri& parsed) {
    const std::string_view written = parsed.text();
    const std::size_t at = std::min(parsed.errorAt(), written.size());
    const auto schemeEnd = written.find("://");
    const std::size_t authorityStart = schemeEnd == std::string_view::npos ? written.size() : schemeEnd + 3;
    const std::size_t authorityEnd = std::min(written.find_first_of("/?#", authorityStart), written.size());
    if (at >= authorityStart && at <= authorityEnd) {
        const auto authority = written.substr(authorityStart, authorityEnd - authorityStart);
        const std::size_t offset = at - authorityStart;
        if (authority.starts_with('[')) {
            const auto close = authority.find(']');
            if (close == std::string_view::npos) {
                return urlError(text, "the IPv6 address has no closing ']'");
            }
            if (offset <= close) {
                return ipv6Error(text, authority.substr(1, close - 1));
            }
            const auto after = authority.substr(close + 1);
            if (!after.starts_with(':')) {
                return urlError(text, "unexpected '" + std::string(after) + "' after the IPv6 address");
            }
            return portError(text, after.substr(1));
        }
        const auto colon = authority.find(':');
        if (colon != std::string_view::npos && offset >= colon) {
            return portError(text, authority.substr(colon + 1));
        }
        return hostError(text, authority.substr(0, colon));
    }
    // liburiparser stops inside a broken escape ("%zz", "%2"); show it from its '%'.
    const auto percent = written.rfind('%', at);
    const std::size_t from = percent != std::string_view::npos && at - percent <= 2 ? percent : at;
    return urlError(text, "is not a valid URL from position " + std::to_string(from + 1) + " ('" +
                              std::string(written.substr(from)) +
                              "'): percent-encode characters such as [ ] there, and write a '%' as %25");
}

// The policy checks on what liburiparser read: an absolute http(s) URL with a plain host and no credentials.
Result<Url> fromUri(std::string_view text, const UriUriA& uri) {
    if (!present(uri.scheme) || !present(uri.hostText)) {
        return urlError(text, "is not an absolute URL; write it as http://host/path or https://host/path");
    }
    Url url;
    url.scheme = text::toLowerAscii(view(uri.scheme));
    if (url.scheme != "http" && url.scheme != "https") {
        return urlError(text, "the scheme '" + url.scheme + "' is not supported; use http:// or https://");
    }
    if (present(uri.userInfo)) {
        return urlError(text, "contains a user name or password (before '@'); credentials in URLs are not "
                              "supported because they would travel to every mirror and end up in logs: "
                              "remove the part up to '@'");
    }

    const auto host = view(uri.hostText);
    if (present(uri.hostData.ipFuture)) {
        return ipv6Error(text, host);
    }
    if (uri.hostData.ip6 == nullptr) {
        if (host.empty()) {
            return urlError(text, "has no host name");
        }
        if (!std::all_of(host.begin(), host.end(), isHostChar)) {
            return hostError(text, host);
        }
    }
    url.host = text::toLowerAscii(host);

    url.port = defaultPort(url.scheme);
    // RFC 3986 allows an empty port ("host:/") and means the default by it.
    if (const auto portText = view(uri.portText); !portText.empty()) {
        std::uint16_t port = 0;
        if (!text::parseNumber(portText, port) || port == 0) {
            return portError(text, portText);
        }
        url.port = port;
    }

    // The path and query as written (the fragment is for the client, never sent), at least "/".
    url.path.clear();
    for (const UriPathSegmentA* segment = uri.pathHead; segment != nullptr; segment = segment->next) {
        url.path += '/';
        url.path += view(segment->text);
    }
    if (url.path.empty()) {
        url.path = "/";
    }
    if (present(uri.query)) {
        url.path += '?';
        url.path += view(uri.query);
    }
    return url;
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
    if (auto error = checkCharacters(text)) {
        return *error;
    }
    const ParsedUri parsed(percentEncodeStrays(text));
    if (!parsed.parsed()) {
        return syntaxError(text, parsed);
    }
    return fromUri(text, parsed.uri());
}

std::string urlScheme(std::string_view text) {
    if (checkCharacters(text)) {
        return {};
    }
    const ParsedUri parsed(percentEncodeStrays(text));
    return parsed.parsed() ? text::toLowerAscii(view(parsed.uri().scheme)) : std::string();
}

Result<Url> resolveUrl(const Url& base, std::string_view reference) {
    if (auto error = checkCharacters(reference)) {
        return *error;
    }
    const ParsedUri parsedReference(percentEncodeStrays(reference));
    if (!parsedReference.parsed()) {
        return syntaxError(reference, parsedReference);
    }
    const UriUriA& relative = parsedReference.uri();
    if (present(relative.scheme) && !present(relative.hostText)) {
        return urlError(reference, "is not an http:// or https:// URL");
    }
    const ParsedUri parsedBase(base.toString());
    if (!parsedBase.parsed()) {
        return syntaxError(parsedBase.text(), parsedBase);
    }
    ResolvedUri resolved;
    if (uriAddBaseUriExA(&resolved.uri, &relative, &parsedBase.uri(), URI_RESOLVE_STRICTLY) != URI_SUCCESS) {
        return urlError(reference, "cannot be resolved against " + base.toString());
    }
    resolved.resolved = true;
    int length = 0;
    if (uriToStringCharsRequiredA(&resolved.uri, &length) != URI_SUCCESS) {
        return urlError(reference, "cannot be resolved against " + base.toString());
    }
    std::string absolute(static_cast<std::size_t>(length) + 1, '\0');
    if (uriToStringA(absolute.data(), &resolved.uri, length + 1, nullptr) != URI_SUCCESS) {
        return urlError(reference, "cannot be resolved against " + base.toString());
    }
    absolute.resize(static_cast<std::size_t>(length));
    auto url = parseUrl(absolute);
    if (url) {
        // liburiparser writes an IPv6 address out in full ("0000:...:0001"); RFC 3986 copies the authority as
        // written, and the origin must stay the same one: the reference's host, else the base's.
        url->host = present(relative.hostText) ? text::toLowerAscii(view(relative.hostText)) : base.host;
    }
    return url;
}

} // namespace nicer::net
