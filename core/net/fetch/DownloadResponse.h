#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::net {

/// What the fetcher does with a response, decided from its status and headers alone.
enum class ResponseAction {
    /// Take the body: it continues the part file exactly where it ends (a 200 from the start, or a 206
    /// whose Content-Range starts at the part's size).
    Write,
    /// The server ignored Range and sends the whole file (200): empty the part file and take the body from
    /// the start. Never append a full body to a prefix.
    Restart,
    /// 416 and the part file already holds the whole file: verify it as it is.
    Verify,
    /// 416 while the part file is longer than the server's file: it cannot be a prefix; discard it and try
    /// again from the start.
    Discard,
    /// A failed attempt worth repeating on this mirror after a pause (5xx, 429, 408, or a response that
    /// contradicts the manifest or the request).
    Retry,
    /// This mirror will not serve the file (403, 404, other 4xx, a redirect without a target): go on to the
    /// next mirror.
    NextMirror,
    /// 301, 302, 303, 307 or 308 with a Location: ask there instead (ResponseVerdict::location).
    Redirect,
};

/// The decision about one response, with the facts the body must then match.
struct ResponseVerdict {
    ResponseAction action = ResponseAction::Retry;
    /// Write and Restart: where in the file the body starts (the part size, or 0).
    std::uint64_t bodyOffset = 0;
    /// Write and Restart: bytes the body will carry, when the response says so.
    std::optional<std::uint64_t> bodyLength;
    /// The size of the whole file as the server reports it, when it does.
    std::optional<std::uint64_t> fileSize;
    /// For every action but Write: what happened, for the user ("the server answered 404 Not Found").
    std::string reason;
    /// Redirect: the Location header as sent (possibly relative to the request's URL).
    std::string location;
};

/// The response's headers that matter for a download.
struct ResponseFacts {
    int status = 0;
    std::optional<std::uint64_t> contentLength; ///< nullopt when absent or not a number
    std::optional<std::string> contentRange;    ///< raw value, when present
    std::optional<std::string> location;        ///< raw value, when present
};

/// Decides what to do with a response to a GET that asked for the file from byte @p partSize on
/// ("Range: bytes=partSize-" when partSize > 0). @p expectedSize is the manifest's size, if it gives one.
/// A 206 is accepted only when its Content-Range starts at partSize, runs to the end of the file and
/// agrees with Content-Length and with @p expectedSize.
ResponseVerdict judgeResponse(const ResponseFacts& response, std::uint64_t partSize,
                              std::optional<std::uint64_t> expectedSize);

/// The total of an unsatisfied Content-Range ("bytes *\/TOTAL", sent with 416); nullopt for anything else.
std::optional<std::uint64_t> parseUnsatisfiedRange(std::string_view value);

/// The Range header value that asks for everything from @p offset on: "bytes=OFFSET-".
std::string rangeFrom(std::uint64_t offset);

} // namespace nicer::net
