#pragma once

#include "net/http2/StreamEnd.h"
#include "util/Result.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct nghttp2_session;

namespace nicer::net {

/// An HTTP/2 client connection without I/O: bytes from the socket go into receive(), bytes for the socket
/// come out of output(). It sends GET requests and reports responses to a Listener. nghttp2 does the
/// protocol; this class adds what the fetcher needs on top: receive windows the caller opens only as fast as
/// it wants data (manual flow control), bounded response headers, clear stream outcomes and PING RTTs.
///
/// Listener callbacks are made only from receive(), output(), terminate() and connectionLost(), never from
/// the other calls. A listener may call any method from a callback except receive() and the destructor.
class Http2Session {
public:
    using Header = std::pair<std::string, std::string>;
    using Headers = std::vector<Header>;
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    /// HTTP/2 error code CANCEL (RFC 9113 section 7), the usual code to give up a stream.
    static constexpr std::uint32_t kCancel = 0x8;

    struct Options {
        /// Receive window of the whole connection, in bytes (at most 2^31-1). It bounds the data the server
        /// may have in flight on all streams together; unconsumed bytes count against it.
        std::uint32_t connectionWindow = 64u << 20;
        /// Initial receive window of each stream (SETTINGS_INITIAL_WINDOW_SIZE, at most 2^31-1).
        std::uint32_t streamWindow = 16u << 20;
        /// Largest response header list per stream, counted as in RFC 9113 (name + value + 32 per field)
        /// over all header blocks of the stream; also sent as SETTINGS_MAX_HEADER_LIST_SIZE.
        std::uint32_t maxHeaderListSize = 64u << 10;
        /// Largest number of response header fields per stream, over all its header blocks.
        std::uint32_t maxHeaderCount = 200;
        /// True: received DATA opens the windows again only when the caller calls consume(). False: every
        /// byte is consumed as soon as onData() returns (fastest, no rate control).
        bool manualFlowControl = true;
    };

    struct Request {
        std::string scheme = "https";
        /// Host and optional port, as in a URL ("example.org", "[::1]:8443").
        std::string authority;
        /// Path and query, starting with '/'.
        std::string path;
        /// Extra request headers such as {"range", "bytes=0-99"} or {"priority", "u=3"}; names are sent in
        /// lower case. Pseudo-headers and connection-specific headers are refused.
        Headers headers;
    };

    /// Receives what happens on the connection. Each stream submitted gets exactly one onStreamClosed().
    class Listener {
    public:
        virtual ~Listener() = default;
        /// The final response header block (1xx interim responses are skipped; trailers are not reported).
        virtual void onResponseHeaders(std::int32_t stream, int status, const Headers& headers) = 0;
        /// A piece of the response body. With manual flow control, consume() these bytes when they may be
        /// replaced by new ones.
        virtual void onData(std::int32_t stream, std::span<const std::uint8_t> data) = 0;
        /// The stream is over; its id is not valid any more. Its unconsumed bytes have been released.
        virtual void onStreamClosed(std::int32_t stream, StreamEnd end) = 0;
        /// The server will not process streams above @p lastStreamId (those close as NotProcessed) and
        /// accepts no new ones; open a new connection for further requests.
        virtual void onGoAway(std::int32_t lastStreamId, std::uint32_t errorCode) {
            (void)lastStreamId;
            (void)errorCode;
        }
        /// The answer to a ping(), timed with the session's clock.
        virtual void onPingAck(std::chrono::nanoseconds rtt) { (void)rtt; }
    };

    /// A client session that has already queued the connection preface, SETTINGS and the connection window
    /// update in output(). @p now is the clock for PING RTTs (steady_clock::now when empty). Fails on
    /// options out of range or when nghttp2 cannot allocate the session.
    static Result<std::unique_ptr<Http2Session>> create(Listener& listener, Options options, Clock now = {});
    /// The same with default Options.
    static Result<std::unique_ptr<Http2Session>> create(Listener& listener);

    ~Http2Session();
    Http2Session(const Http2Session&) = delete;
    Http2Session& operator=(const Http2Session&) = delete;

    /// Feeds bytes read from the socket. An Error says the server broke the protocol (or a listener threw):
    /// the connection is then over, every open stream has been closed, and output() may still hold a GOAWAY
    /// worth sending before closing the socket.
    Result<void> receive(std::span<const std::uint8_t> bytes);

    /// Bytes to write to the socket, until drainOutput() says how many were written. Pulls queued frames
    /// (requests, WINDOW_UPDATEs, RST_STREAM, PING, GOAWAY) from nghttp2 first.
    std::string_view output();
    /// Drops the first @p n bytes of output(), the ones the socket accepted.
    void drainOutput(std::size_t n);

    /// The session wants bytes from the socket.
    bool wantsRead() const;
    /// The session has bytes for the socket (call output()).
    bool wantsWrite() const;
    /// Nothing more to read or write: close the socket.
    bool finished() const;
    /// New requests may be submitted: no GOAWAY in either direction and no failure yet.
    bool acceptsRequests() const;
    /// The server's SETTINGS (its connection preface) arrived.
    bool peerSettingsReceived() const { return m_peerSettingsReceived; }
    /// The server acknowledged the client's SETTINGS.
    bool settingsAcknowledged() const { return m_settingsAcknowledged; }

    /// Queues a GET for @p request; returns its stream id. nghttp2 holds requests beyond the server's
    /// concurrency limit back until streams close, so keep activeStreams() below
    /// remoteMaxConcurrentStreams().
    Result<std::int32_t> submitGet(const Request& request);

    /// Gives up @p stream (RST_STREAM with @p errorCode); it closes as Cancelled, data still arriving for it
    /// is dropped and its unconsumed bytes are released. Does nothing for a stream that is not open.
    void resetStream(std::int32_t stream, std::uint32_t errorCode = kCancel);

    /// Sends a PING carrying the current time; Listener::onPingAck() reports the round-trip time.
    void ping();

    /// Graceful end: sends GOAWAY (NO_ERROR), lets open streams finish and accepts no new requests.
    void shutdown();
    /// Immediate end: sends GOAWAY with @p errorCode; open streams close as ConnectionClosed once it is
    /// out (at the next output()).
    void terminate(std::uint32_t errorCode = 0);
    /// The transport failed or the server closed the socket: closes every open stream (ConnectionClosed,
    /// or NotProcessed if its request was never sent) and ends the session.
    void connectionLost();

    /// Acknowledges @p n bytes of @p stream's data so the server may send that much more; returns how many
    /// were acknowledged (at most unconsumed(stream); 0 for a closed stream, whose bytes were released when
    /// it closed). nghttp2 sends the WINDOW_UPDATE once half of a window is consumed, not per call.
    std::size_t consume(std::int32_t stream, std::size_t n);
    /// Bytes of @p stream delivered by onData() and not consumed yet.
    std::size_t unconsumed(std::int32_t stream) const;
    /// Sum of unconsumed() over all open streams.
    std::size_t unconsumedTotal() const;

    /// Sets the connection's receive window (at most 2^31-1). Raising it sends a WINDOW_UPDATE; lowering it
    /// withholds future updates until the server's credit has shrunk to the new size.
    Result<void> setConnectionWindow(std::uint32_t bytes);
    /// The same for one open stream.
    Result<void> setStreamWindow(std::int32_t stream, std::uint32_t bytes);

    /// Streams submitted and not yet closed, including requests nghttp2 still holds back.
    std::size_t activeStreams() const;
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (100 until its SETTINGS arrive, 2^32-1 if unlimited).
    std::uint32_t remoteMaxConcurrentStreams() const;

private:
    struct Callbacks;

    struct SessionDeleter {
        void operator()(nghttp2_session* session) const;
    };

    struct Stream {
        std::size_t unconsumed = 0;
        std::size_t headerBytes = 0;
        std::size_t headerCount = 0;
        int status = 0;
        Headers headers;
        bool headersDelivered = false;
        bool requestSent = false;
        bool endStreamReceived = false;
        std::optional<std::uint32_t> peerReset;
        std::optional<std::uint32_t> resetSent;
        // Set when this side gave the stream up (Cancelled or HeadersTooLarge): its data is dropped.
        std::optional<StreamEnd> localEnd;
    };

    Http2Session(Listener& listener, Options options, Clock now);

    Result<void> start();
    void flush();
    void onHeadersEnd(std::int32_t id, bool endStream);
    void onPingAck(const std::uint8_t* payload);
    void onGoAwaySent(std::uint32_t errorCode, std::string_view debugData);
    StreamEnd endOf(std::int32_t id, const Stream& stream, std::uint32_t closeCode) const;
    void closeStream(std::int32_t id, StreamEnd end);
    // Closes every open stream with @p end, or as NotProcessed if its request never left.
    void closeAllStreams(StreamEnd end);
    void failConnection(Error error, std::uint32_t errorCode);

    Listener& m_listener;
    Options m_options;
    Clock m_now;
    std::unordered_map<std::int32_t, Stream> m_streams;
    std::size_t m_unconsumedTotal = 0;
    std::string m_output;
    std::vector<std::int64_t> m_pingsInFlight;
    std::vector<std::int32_t> m_cancelledUnsent;

    // nghttp2 must not be re-entered from its own callbacks; output() and receive() check this.
    bool m_inLibrary = false;
    bool m_failed = false;
    bool m_goAwayReceived = false;
    bool m_peerSettingsReceived = false;
    bool m_settingsAcknowledged = false;
    std::int32_t m_peerLastStreamId = 0;
    bool m_shutdownRequested = false;
    bool m_terminateRequested = false;
    bool m_goAwaySent = false;
    std::uint32_t m_goAwaySentCode = 0;
    std::string m_libraryMessage;
    std::optional<Error> m_callbackError;
    std::optional<Error> m_connectionError;
    // Last, so the nghttp2 session goes before the state its callbacks use.
    std::unique_ptr<nghttp2_session, SessionDeleter> m_session;
};

} // namespace nicer::net
