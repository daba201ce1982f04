#pragma once

#include "util/Result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace nicer::net {

/// An absolute http:// or https:// URL, split into the parts an HTTP/2 request needs.
struct Url {
    std::string scheme;     ///< "http" or "https", lower case
    std::string host;       ///< lower case; an IPv6 literal without its brackets
    std::uint16_t port = 0; ///< always set: 80 or 443 when the URL names none
    std::string path = "/"; ///< path and query, at least "/"; the fragment is dropped

    /// host[:port] as sent in :authority: brackets around an IPv6 literal, the port only when not the
    /// default.
    std::string authority() const;
    /// The URL written back: scheme://authority path.
    std::string toString() const;

    bool operator==(const Url&) const = default;
};

/// Parses an absolute http:// or https:// URL (RFC 3986, with liburiparser). Rejects other schemes, user
/// names and passwords in the URL, empty hosts, bad ports, and spaces or control characters anywhere. Bytes
/// outside ASCII and the characters RFC 3986 allows nowhere (" < > \ ^ ` { | }) are percent-encoded;
/// everything else is kept as written (nothing is decoded).
Result<Url> parseUrl(std::string_view text);

/// The scheme of @p text in lower case ("https", "ftp", "magnet"), as RFC 3986 reads it; empty when the text
/// has none or is not a URI at all. For a caller that skips other schemes before parseUrl() judges the rest.
std::string urlScheme(std::string_view text);

/// Resolves @p reference (a Location header: an absolute URL, "//host/path", "/path", "?query" or a path
/// relative to @p base) against @p base as RFC 3986 section 5.2 says, dot segments removed. The result must
/// be an http:// or https:// URL that parseUrl() accepts; anything else is an error saying so.
Result<Url> resolveUrl(const Url& base, std::string_view reference);

} // namespace nicer::net
