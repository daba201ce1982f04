#include "net/fetch/DownloadResponse.h"

#include "net/http2/HttpHeaders.h"
#include "util/Text.h"

namespace nicer::net {

namespace {

std::string n(std::uint64_t value) {
    return std::to_string(value);
}

ResponseVerdict verdict(ResponseAction action, std::string reason) {
    ResponseVerdict v;
    v.action = action;
    v.reason = std::move(reason);
    return v;
}

std::string statusText(int status) {
    switch (status) {
    case 403:
        return "403 Forbidden";
    case 404:
        return "404 Not Found";
    case 408:
        return "408 Request Timeout";
    case 410:
        return "410 Gone";
    case 429:
        return "429 Too Many Requests";
    case 500:
        return "500 Internal Server Error";
    case 502:
        return "502 Bad Gateway";
    case 503:
        return "503 Service Unavailable";
    case 504:
        return "504 Gateway Timeout";
    default:
        return std::to_string(status);
    }
}

ResponseVerdict judgeFull(const ResponseFacts& response, std::uint64_t partSize,
                          std::optional<std::uint64_t> expectedSize) {
    if (expectedSize && response.contentLength && *response.contentLength != *expectedSize) {
        return verdict(ResponseAction::Retry, "the server's file has " + n(*response.contentLength) +
                                                  " bytes (Content-Length) but the manifest says " +
                                                  n(*expectedSize));
    }
    ResponseVerdict v;
    v.action = partSize > 0 ? ResponseAction::Restart : ResponseAction::Write;
    v.bodyOffset = 0;
    v.bodyLength = response.contentLength;
    v.fileSize = response.contentLength;
    if (partSize > 0) {
        v.reason = "the server ignored the range request (200 instead of 206); starting over from byte 0";
    }
    return v;
}

ResponseVerdict judgePartial(const ResponseFacts& response, std::uint64_t partSize,
                             std::optional<std::uint64_t> expectedSize) {
    const auto range = response.contentRange ? parseContentRange(*response.contentRange) : std::nullopt;
    if (!range) {
        return verdict(ResponseAction::Retry, "the server answered 206 without a valid Content-Range (" +
                                                  response.contentRange.value_or("none") + ")");
    }
    if (range->first != partSize) {
        return verdict(ResponseAction::Retry, "the server sent bytes from " + n(range->first) +
                                                  " on, but the request asked from " + n(partSize));
    }
    if (range->total && expectedSize && *range->total != *expectedSize) {
        return verdict(ResponseAction::Retry, "the server's file has " + n(*range->total) +
                                                  " bytes (Content-Range) but the manifest says " +
                                                  n(*expectedSize));
    }
    const auto end = range->total.has_value() ? range->total : expectedSize;
    if (end && range->last + 1 != *end) {
        return verdict(ResponseAction::Retry, "the server sent bytes " + n(range->first) + "-" +
                                                  n(range->last) + " but the file ends at byte " +
                                                  n(*end - 1));
    }
    const std::uint64_t length = range->last - range->first + 1;
    if (response.contentLength && *response.contentLength != length) {
        return verdict(ResponseAction::Retry, "the server's Content-Length (" + n(*response.contentLength) +
                                                  ") disagrees with its Content-Range (" + n(length) +
                                                  " bytes)");
    }
    ResponseVerdict v;
    v.action = ResponseAction::Write;
    v.bodyOffset = partSize;
    v.bodyLength = length;
    v.fileSize = range->last + 1;
    return v;
}

ResponseVerdict judgeUnsatisfiable(const ResponseFacts& response, std::uint64_t partSize,
                                   std::optional<std::uint64_t> expectedSize) {
    const auto total = response.contentRange ? parseUnsatisfiedRange(*response.contentRange) : std::nullopt;
    const bool sizeAgrees = !expectedSize || *expectedSize == partSize;
    if (partSize > 0 && total && *total == partSize && sizeAgrees) {
        ResponseVerdict v = verdict(ResponseAction::Verify, "the part file already holds the whole file");
        v.fileSize = total;
        return v;
    }
    if (partSize > 0 && (!total || *total < partSize)) {
        return verdict(ResponseAction::Discard, "the part file (" + n(partSize) +
                                                    " bytes) is longer than the server's file" +
                                                    (total ? " (" + n(*total) + " bytes)" : std::string()) +
                                                    "; discarding it and starting over");
    }
    return verdict(ResponseAction::Retry, "the server answered 416 Range Not Satisfiable");
}

} // namespace

ResponseVerdict judgeResponse(const ResponseFacts& response, std::uint64_t partSize,
                              std::optional<std::uint64_t> expectedSize) {
    const int status = response.status;
    if (status == 200) {
        return judgeFull(response, partSize, expectedSize);
    }
    if (status == 206) {
        return judgePartial(response, partSize, expectedSize);
    }
    if (status == 416) {
        return judgeUnsatisfiable(response, partSize, expectedSize);
    }
    if (status == 408 || status == 429 || (status >= 500 && status <= 599)) {
        return verdict(ResponseAction::Retry, "the server answered " + statusText(status));
    }
    const bool followable = status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    if (followable && response.location && !text::trim(*response.location).empty()) {
        ResponseVerdict v = verdict(ResponseAction::Redirect, "the server answered " + statusText(status));
        v.location = std::string(text::trim(*response.location));
        return v;
    }
    if (status >= 300 && status <= 399) {
        return verdict(ResponseAction::NextMirror,
                       "the server answered " + statusText(status) +
                           (followable
                                ? " without saying where to (no Location header)"
                                : " (a redirect nicer cannot follow: put the final URL in the manifest)"));
    }
    return verdict(ResponseAction::NextMirror, "the server answered " + statusText(status));
}

std::optional<std::uint64_t> parseUnsatisfiedRange(std::string_view value) {
    value = text::trim(value);
    constexpr std::string_view kPrefix = "bytes */";
    if (!value.starts_with(kPrefix)) {
        return std::nullopt;
    }
    std::uint64_t total = 0;
    if (!text::parseNumber(value.substr(kPrefix.size()), total)) {
        return std::nullopt;
    }
    return total;
}

std::string rangeFrom(std::uint64_t offset) {
    return "bytes=" + std::to_string(offset) + "-";
}

} // namespace nicer::net
