#pragma once

#include <cstdint>
#include <string>

namespace nicer::net {

/// How an HTTP/2 stream ended, as the fetcher needs it to choose between "done", "retry" and "give up".
struct StreamEnd {
    enum class Kind {
        /// END_STREAM arrived: the response is whole.
        Complete,
        /// The server sent RST_STREAM with errorCode.
        ResetByPeer,
        /// The response header block exceeded Options::maxHeaderListSize or maxHeaderCount; this stream
        /// was reset (errorCode is the code sent) and the connection goes on.
        HeadersTooLarge,
        /// The response broke HTTP/2 messaging rules (e.g. no :status, content-length mismatch) or flow
        /// control (DATA beyond the stream's window); this stream was reset with errorCode and the
        /// connection goes on.
        Malformed,
        /// Http2Session::resetStream() was called; errorCode is the code it sent.
        Cancelled,
        /// The server never processed the request: its GOAWAY named a lower last stream id, or the request
        /// could not be sent at all. It is safe to repeat it on a new connection.
        NotProcessed,
        /// The connection ended first (protocol error, terminate(), connectionLost()); errorCode is the
        /// HTTP/2 code of the GOAWAY, 0 when the transport went away.
        ConnectionClosed,
    };

    Kind kind = Kind::Complete;
    /// HTTP/2 error code (RFC 9113 section 7) that goes with kind; 0 (NO_ERROR) for Complete.
    std::uint32_t errorCode = 0;

    /// True when the server did not act on the request (NotProcessed, or RST_STREAM REFUSED_STREAM), so
    /// repeating it unchanged elsewhere costs nothing and should not count as a failed attempt.
    bool retryable() const;

    /// A short text for logs and error messages, e.g. "reset by the server (REFUSED_STREAM)".
    std::string describe() const;

    friend bool operator==(const StreamEnd&, const StreamEnd&) = default;
};

} // namespace nicer::net
