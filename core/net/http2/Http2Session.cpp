#include "net/http2/Http2Session.h"

#include "util/Text.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <utility>

namespace nicer::net {

namespace {

constexpr std::uint32_t kMaxWindow = 0x7fffffff;
// Until the server's SETTINGS arrive, assume the minimum RFC 9113 recommends rather than nghttp2's
// "unlimited".
constexpr std::uint32_t kAssumedPeerMaxConcurrentStreams = 100;
// nghttp2's defaults (1000 pending ACKs) are sized for servers; one client talking to one server can call a
// peer abusive much sooner.
constexpr std::size_t kMaxOutboundAck = 100;
constexpr std::size_t kMaxSettingsEntries = 32;
// nghttp2 refuses header blocks above 64 KiB once HPACK-encoded, but only when it tries to send them, where
// the failure would look like a server refusal; a GET needs far less.
constexpr std::size_t kMaxRequestHeaderBytes = 16 * 1024;
// Frames stay queued in nghttp2 beyond this much waiting output, so a slow socket bounds the buffer.
constexpr std::size_t kOutputHighWater = 64 * 1024;
// Pings the server never answers must not pile up.
constexpr std::size_t kMaxPingsInFlight = 16;
// CONTINUATION frames after one HEADERS frame (nghttp2's default since the CVE-2024-28182 fix). Empty ones
// carry no field for maxHeaderListSize or maxHeaderCount to count: only this ends an endless stream of them.
constexpr std::size_t kMaxContinuations = 8;

struct OptionDeleter {
    void operator()(nghttp2_option* option) const { nghttp2_option_del(option); }
};

struct CallbacksDeleter {
    void operator()(nghttp2_session_callbacks* callbacks) const { nghttp2_session_callbacks_del(callbacks); }
};

// RFC 9113 section 8.2.2: these make a request malformed in HTTP/2.
bool isConnectionSpecific(std::string_view name) {
    return name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
           name == "transfer-encoding" || name == "upgrade";
}

const std::uint8_t* bytesOf(std::string_view text) {
    return reinterpret_cast<const std::uint8_t*>(text.data());
}

nghttp2_nv makeNv(std::string_view name, std::string_view value) {
    // nghttp2_submit_request copies names and values, so pointing into caller strings is fine.
    return nghttp2_nv{const_cast<std::uint8_t*>(bytesOf(name)), const_cast<std::uint8_t*>(bytesOf(value)),
                      name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

std::string libraryError(int code) {
    return nghttp2_strerror(code);
}

// What a connection error code says the server did, for when nghttp2 ends the session without a reason.
std::string_view codeMeaning(std::uint32_t errorCode) {
    switch (errorCode) {
    case NGHTTP2_PROTOCOL_ERROR:
        return "a frame against the protocol";
    case NGHTTP2_FLOW_CONTROL_ERROR:
        return "more data than the receive window allows, or a window above 2^31-1";
    case NGHTTP2_FRAME_SIZE_ERROR:
        return "a frame of a wrong size";
    case NGHTTP2_COMPRESSION_ERROR:
        return "a header block that cannot be decoded, or a header field over 64 KiB";
    case NGHTTP2_ENHANCE_YOUR_CALM:
        return "a flood of frames";
    default:
        return "";
    }
}

} // namespace

void Http2Session::SessionDeleter::operator()(nghttp2_session* session) const {
    nghttp2_session_del(session);
}

// nghttp2 calls these with the Http2Session as user data. Each one catches everything: an exception must not
// unwind through C frames, so it becomes NGHTTP2_ERR_CALLBACK_FAILURE and receive() reports it.
struct Http2Session::Callbacks {
    template <typename Body>
    static int guarded(void* userData, Body&& body) {
        auto& self = *static_cast<Http2Session*>(userData);
        try {
            return body(self);
        } catch (const std::exception& e) {
            self.m_callbackError = Error{std::string("handling an HTTP/2 response failed: ") + e.what()};
        } catch (...) {
            self.m_callbackError = Error{"handling an HTTP/2 response failed with an unknown exception"};
        }
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }

    static int onHeader(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
                        std::size_t nameLength, const std::uint8_t* value, std::size_t valueLength,
                        std::uint8_t /*flags*/, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            if (frame->hd.type != NGHTTP2_HEADERS) {
                return 0;
            }
            const auto it = self.m_streams.find(frame->hd.stream_id);
            if (it == self.m_streams.end() || it->second.localEnd) {
                return 0;
            }
            Stream& stream = it->second;
            stream.headerBytes += nameLength + valueLength + 32;
            stream.headerCount += 1;
            if (stream.headerBytes > self.m_options.maxHeaderListSize ||
                stream.headerCount > self.m_options.maxHeaderCount) {
                stream.localEnd = StreamEnd{StreamEnd::Kind::HeadersTooLarge, NGHTTP2_CANCEL};
                stream.headers.clear();
                // Only this stream goes: nghttp2 keeps decoding the block so HPACK stays in step, and the
                // RST_STREAM submitted first sets the code (CANCEL rather than its INTERNAL_ERROR).
                nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_CANCEL);
                return static_cast<int>(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
            }
            const std::string_view n(reinterpret_cast<const char*>(name), nameLength);
            const std::string_view v(reinterpret_cast<const char*>(value), valueLength);
            if (n == ":status") {
                // nghttp2 has already checked that :status is three digits.
                std::from_chars(v.data(), v.data() + v.size(), stream.status);
            } else if (!stream.headersDelivered && !n.starts_with(':')) {
                stream.headers.emplace_back(n, v);
            }
            return 0;
        });
    }

    static int onFrameRecv(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            const std::int32_t id = frame->hd.stream_id;
            const bool endStream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
            switch (frame->hd.type) {
            case NGHTTP2_HEADERS:
                self.onHeadersEnd(id, endStream);
                break;
            case NGHTTP2_DATA:
                if (const auto it = self.m_streams.find(id); it != self.m_streams.end() && endStream) {
                    it->second.endStreamReceived = true;
                }
                break;
            case NGHTTP2_RST_STREAM:
                if (const auto it = self.m_streams.find(id); it != self.m_streams.end()) {
                    it->second.peerReset = frame->rst_stream.error_code;
                }
                break;
            case NGHTTP2_GOAWAY:
                // nghttp2 closes the streams above last_stream_id right after this callback.
                self.m_goAwayReceived = true;
                self.m_peerLastStreamId = frame->goaway.last_stream_id;
                self.m_listener.onGoAway(frame->goaway.last_stream_id, frame->goaway.error_code);
                break;
            case NGHTTP2_PING:
                if ((frame->hd.flags & NGHTTP2_FLAG_ACK) != 0) {
                    self.onPingAck(frame->ping.opaque_data);
                }
                break;
            case NGHTTP2_SETTINGS:
                if ((frame->hd.flags & NGHTTP2_FLAG_ACK) != 0) {
                    self.m_settingsAcknowledged = true;
                } else {
                    self.m_peerSettingsReceived = true;
                }
                break;
            default:
                break;
            }
            return 0;
        });
    }

    // A DATA frame larger than the server's credit. nghttp2 checks each read of a frame: for the connection's
    // window it ends the connection when a read overflows, after delivering the reads before; for a stream's
    // window 1.52 resets the stream (FLOW_CONTROL_ERROR) yet delivers the read that overflowed (1.67 made it
    // a connection error). The same tests, made on the whole frame before any byte of it is delivered, keep
    // every byte the server had no credit for from the listener.
    static int onBeginFrame(nghttp2_session* session, const nghttp2_frame_hd* hd, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            if (hd->type != NGHTTP2_DATA) {
                return 0;
            }
            const std::int32_t connectionCredit = nghttp2_session_get_local_window_size(session);
            if (hd->length > static_cast<std::size_t>(std::max(0, connectionCredit))) {
                // What nghttp2 would do a read later; it ignores the rest of the input from here.
                nghttp2_session_terminate_session(session, NGHTTP2_FLOW_CONTROL_ERROR);
                return 0;
            }
            const auto it = self.m_streams.find(hd->stream_id);
            if (it == self.m_streams.end() || it->second.localEnd) {
                return 0;
            }
            const std::int32_t credit = nghttp2_session_get_stream_local_window_size(session, hd->stream_id);
            if (credit >= 0 && hd->length > static_cast<std::size_t>(credit)) {
                // The stream goes; its bytes are dropped (onDataChunk) and the connection carries on.
                it->second.localEnd = StreamEnd{StreamEnd::Kind::Malformed, NGHTTP2_FLOW_CONTROL_ERROR};
                nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, hd->stream_id,
                                          NGHTTP2_FLOW_CONTROL_ERROR);
            }
            return 0;
        });
    }

    static int onDataChunk(nghttp2_session* session, std::uint8_t /*flags*/, std::int32_t id,
                           const std::uint8_t* data, std::size_t length, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            const auto it = self.m_streams.find(id);
            if (it == self.m_streams.end() || it->second.localEnd) {
                // Nobody reads these bytes, but the windows must get them back or the connection stalls.
                // (nghttp2 1.52 already drops DATA once an RST_STREAM is queued and credits it itself.)
                nghttp2_session_consume(session, id, length);
                return 0;
            }
            it->second.unconsumed += length;
            self.m_unconsumedTotal += length;
            self.m_listener.onData(id, std::span<const std::uint8_t>(data, length));
            if (!self.m_options.manualFlowControl) {
                self.consume(id, length);
            }
            return 0;
        });
    }

    static int onStreamClose(nghttp2_session* /*session*/, std::int32_t id, std::uint32_t errorCode,
                             void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            if (const auto it = self.m_streams.find(id); it != self.m_streams.end()) {
                self.closeStream(id, self.endOf(id, it->second, errorCode));
            }
            return 0;
        });
    }

    static int onFrameSend(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            const auto it = self.m_streams.find(frame->hd.stream_id);
            switch (frame->hd.type) {
            case NGHTTP2_HEADERS:
                if (it != self.m_streams.end()) {
                    it->second.requestSent = true;
                }
                break;
            case NGHTTP2_RST_STREAM:
                if (it != self.m_streams.end()) {
                    it->second.resetSent = frame->rst_stream.error_code;
                }
                break;
            case NGHTTP2_GOAWAY:
                self.onGoAwaySent(frame->goaway.error_code,
                                  std::string_view(reinterpret_cast<const char*>(frame->goaway.opaque_data),
                                                   frame->goaway.opaque_data_len));
                break;
            default:
                break;
            }
            return 0;
        });
    }

    static int onFrameNotSend(nghttp2_session* /*session*/, const nghttp2_frame* frame, int /*libraryError*/,
                              void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            // Request headers are within limits (submitGet checks), so nghttp2 only drops them because a
            // GOAWAY went one way or the other: the server never saw the request.
            const auto it = self.m_streams.find(frame->hd.stream_id);
            if (frame->hd.type == NGHTTP2_HEADERS && it != self.m_streams.end()) {
                const auto end = it->second.localEnd.value_or(StreamEnd{StreamEnd::Kind::NotProcessed, 0});
                self.closeStream(frame->hd.stream_id, end);
            }
            return 0;
        });
    }

    static int onError(nghttp2_session* /*session*/, int /*libraryError*/, const char* message,
                       std::size_t length, void* userData) {
        return guarded(userData, [&](Http2Session& self) {
            self.m_libraryMessage.assign(message, length);
            return 0;
        });
    }
};

Http2Session::Http2Session(Listener& listener, Options options, Clock now)
    : m_listener(listener)
    , m_options(options)
    , m_now(now ? std::move(now) : Clock([] { return std::chrono::steady_clock::now(); })) {}

Http2Session::~Http2Session() = default;

Result<std::unique_ptr<Http2Session>> Http2Session::create(Listener& listener) {
    return create(listener, Options{});
}

Result<std::unique_ptr<Http2Session>> Http2Session::create(Listener& listener, Options options, Clock now) {
    if (options.connectionWindow > kMaxWindow || options.streamWindow > kMaxWindow) {
        return Error{"HTTP/2 receive windows can be at most 2147483647 bytes"};
    }
    std::unique_ptr<Http2Session> session(new Http2Session(listener, options, std::move(now)));
    if (auto started = session->start(); !started) {
        return started.error();
    }
    return session;
}

Result<void> Http2Session::start() {
    nghttp2_session_callbacks* rawCallbacks = nullptr;
    if (const int rv = nghttp2_session_callbacks_new(&rawCallbacks); rv != 0) {
        return Error{"cannot set up an HTTP/2 session: " + libraryError(rv)};
    }
    const std::unique_ptr<nghttp2_session_callbacks, CallbacksDeleter> callbacks(rawCallbacks);
    nghttp2_session_callbacks_set_on_header_callback(rawCallbacks, &Callbacks::onHeader);
    nghttp2_session_callbacks_set_on_frame_recv_callback(rawCallbacks, &Callbacks::onFrameRecv);
    nghttp2_session_callbacks_set_on_begin_frame_callback(rawCallbacks, &Callbacks::onBeginFrame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(rawCallbacks, &Callbacks::onDataChunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(rawCallbacks, &Callbacks::onStreamClose);
    nghttp2_session_callbacks_set_on_frame_send_callback(rawCallbacks, &Callbacks::onFrameSend);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(rawCallbacks, &Callbacks::onFrameNotSend);
    nghttp2_session_callbacks_set_error_callback2(rawCallbacks, &Callbacks::onError);

    nghttp2_option* rawOption = nullptr;
    if (const int rv = nghttp2_option_new(&rawOption); rv != 0) {
        return Error{"cannot set up an HTTP/2 session: " + libraryError(rv)};
    }
    const std::unique_ptr<nghttp2_option, OptionDeleter> option(rawOption);
    // Always manual: the automatic mode is consume() right after onData(), so both share one code path.
    nghttp2_option_set_no_auto_window_update(rawOption, 1);
    nghttp2_option_set_peer_max_concurrent_streams(rawOption, kAssumedPeerMaxConcurrentStreams);
    nghttp2_option_set_max_outbound_ack(rawOption, kMaxOutboundAck);
    nghttp2_option_set_max_settings(rawOption, kMaxSettingsEntries);
    // Setting it explicitly also makes the build, and through dpkg-shlibdeps the .deb, need a libnghttp2
    // with the limit: Debian 12 backported it in 1.52.0-1+deb12u2, upstream has it since 1.61.0.
    nghttp2_option_set_max_continuations(rawOption, kMaxContinuations);
    nghttp2_option_set_max_reserved_remote_streams(rawOption, 0);

    nghttp2_session* rawSession = nullptr;
    if (const int rv = nghttp2_session_client_new2(&rawSession, rawCallbacks, this, rawOption); rv != 0) {
        return Error{"cannot set up an HTTP/2 session: " + libraryError(rv)};
    }
    m_session.reset(rawSession);

    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, m_options.streamWindow},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, m_options.maxHeaderListSize},
        {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
    };
    if (const int rv = nghttp2_submit_settings(rawSession, NGHTTP2_FLAG_NONE, settings, std::size(settings));
        rv != 0) {
        return Error{"cannot queue the HTTP/2 SETTINGS: " + libraryError(rv)};
    }
    // SETTINGS only covers streams; the connection window starts at 65535 until a WINDOW_UPDATE raises it.
    if (const int rv = nghttp2_session_set_local_window_size(
            rawSession, NGHTTP2_FLAG_NONE, 0, static_cast<std::int32_t>(m_options.connectionWindow));
        rv != 0) {
        return Error{"cannot set the HTTP/2 connection window: " + libraryError(rv)};
    }
    flush();
    return {};
}

Result<void> Http2Session::receive(std::span<const std::uint8_t> bytes) {
    if (m_inLibrary) {
        return Error{"Http2Session::receive() must not be called from a listener callback"};
    }
    if (m_connectionError) {
        return *m_connectionError;
    }
    if (m_failed) {
        return Error{"the HTTP/2 connection is already closed"};
    }
    m_inLibrary = true;
    const auto rv = nghttp2_session_mem_recv(m_session.get(), bytes.data(), bytes.size());
    m_inLibrary = false;
    if (rv < 0) {
        const bool ours = m_callbackError.has_value();
        Error error =
            ours ? *m_callbackError
                 : Error{"the server broke the HTTP/2 protocol (" +
                         (m_libraryMessage.empty() ? libraryError(static_cast<int>(rv)) : m_libraryMessage) +
                         "); the connection was dropped"};
        failConnection(error, ours ? NGHTTP2_INTERNAL_ERROR : NGHTTP2_PROTOCOL_ERROR);
        return error;
    }
    flush();
    if (m_connectionError) {
        return *m_connectionError;
    }
    return {};
}

std::string_view Http2Session::output() {
    flush();
    return m_output;
}

void Http2Session::drainOutput(std::size_t n) {
    m_output.erase(0, std::min(n, m_output.size()));
}

bool Http2Session::wantsRead() const {
    return !m_failed && nghttp2_session_want_read(m_session.get()) != 0;
}

bool Http2Session::wantsWrite() const {
    return !m_output.empty() || (!m_failed && nghttp2_session_want_write(m_session.get()) != 0);
}

bool Http2Session::finished() const {
    return !wantsRead() && !wantsWrite();
}

bool Http2Session::acceptsRequests() const {
    return !m_failed && !m_goAwayReceived && !m_goAwaySent && !m_shutdownRequested;
}

Result<std::int32_t> Http2Session::submitGet(const Request& request) {
    if (!acceptsRequests()) {
        return Error{m_goAwayReceived
                         ? "the server is closing this HTTP/2 connection (GOAWAY); send the "
                           "request on a new connection"
                         : "this HTTP/2 connection is closed; send the request on a new connection"};
    }
    if (request.scheme.empty() || request.authority.empty() || !request.path.starts_with('/')) {
        return Error{"an HTTP/2 request needs a scheme, an authority and a path starting with '/' (got '" +
                     request.scheme + "://" + request.authority + request.path + "')"};
    }
    std::vector<std::string> names;
    names.reserve(request.headers.size());
    std::size_t total = request.scheme.size() + request.authority.size() + request.path.size();
    for (const auto& [name, value] : request.headers) {
        std::string lower = text::toLowerAscii(name);
        if (lower.empty() || lower.starts_with(':') || isConnectionSpecific(lower) ||
            nghttp2_check_header_name(bytesOf(lower), lower.size()) == 0 ||
            nghttp2_check_header_value(bytesOf(value), value.size()) == 0) {
            return Error{"the request header '" + name + "' cannot be sent over HTTP/2"};
        }
        total += lower.size() + value.size() + 32;
        names.push_back(std::move(lower));
    }
    if (total > kMaxRequestHeaderBytes) {
        return Error{"the request headers are too large for HTTP/2 (" + std::to_string(total) + " bytes)"};
    }

    std::vector<nghttp2_nv> nva;
    nva.reserve(4 + names.size());
    nva.push_back(makeNv(":method", "GET"));
    nva.push_back(makeNv(":scheme", request.scheme));
    nva.push_back(makeNv(":authority", request.authority));
    nva.push_back(makeNv(":path", request.path));
    for (std::size_t i = 0; i < names.size(); ++i) {
        nva.push_back(makeNv(names[i], request.headers[i].second));
    }
    const std::int32_t id =
        nghttp2_submit_request(m_session.get(), nullptr, nva.data(), nva.size(), nullptr, nullptr);
    if (id < 0) {
        return Error{"cannot queue the HTTP/2 request for " + request.path + ": " + libraryError(id)};
    }
    m_streams.emplace(id, Stream{});
    return id;
}

void Http2Session::resetStream(std::int32_t stream, std::uint32_t errorCode) {
    const auto it = m_streams.find(stream);
    if (it == m_streams.end() || it->second.localEnd || m_failed) {
        return;
    }
    it->second.localEnd = StreamEnd{StreamEnd::Kind::Cancelled, errorCode};
    // For a request still queued (beyond the server's concurrency limit) nghttp2 only marks it cancelled and
    // reports nothing until a slot frees up; close it at the next output() so its slot is free at once.
    if (!it->second.requestSent) {
        m_cancelledUnsent.push_back(stream);
    }
    nghttp2_submit_rst_stream(m_session.get(), NGHTTP2_FLAG_NONE, stream, errorCode);
}

void Http2Session::ping() {
    if (m_failed) {
        return;
    }
    const std::int64_t sent =
        std::chrono::duration_cast<std::chrono::nanoseconds>(m_now().time_since_epoch()).count();
    std::uint8_t payload[8];
    for (int i = 0; i < 8; ++i) {
        payload[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(sent) >> (56 - 8 * i));
    }
    if (nghttp2_submit_ping(m_session.get(), NGHTTP2_FLAG_NONE, payload) != 0) {
        return;
    }
    if (m_pingsInFlight.size() >= kMaxPingsInFlight) {
        m_pingsInFlight.erase(m_pingsInFlight.begin());
    }
    m_pingsInFlight.push_back(sent);
}

void Http2Session::onPingAck(const std::uint8_t* payload) {
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) {
        value = (value << 8) | payload[i];
    }
    const auto sent = static_cast<std::int64_t>(value);
    // Only our own pings give an RTT; an ACK with a payload we never sent says nothing about time.
    const auto it = std::find(m_pingsInFlight.begin(), m_pingsInFlight.end(), sent);
    if (it == m_pingsInFlight.end()) {
        return;
    }
    m_pingsInFlight.erase(it);
    m_listener.onPingAck(m_now().time_since_epoch() - std::chrono::nanoseconds(sent));
}

void Http2Session::onHeadersEnd(std::int32_t id, bool endStream) {
    const auto it = m_streams.find(id);
    if (it == m_streams.end()) {
        return;
    }
    Stream& stream = it->second;
    stream.endStreamReceived = stream.endStreamReceived || endStream;
    if (stream.localEnd || stream.headersDelivered) {
        return;
    }
    if (stream.status >= 100 && stream.status < 200) {
        stream.status = 0;
        stream.headers.clear();
        return;
    }
    stream.headersDelivered = true;
    const Headers headers = std::move(stream.headers);
    stream.headers.clear();
    m_listener.onResponseHeaders(id, stream.status, headers);
}

void Http2Session::onGoAwaySent(std::uint32_t errorCode, std::string_view debugData) {
    m_goAwaySent = true;
    m_goAwaySentCode = errorCode;
    if (errorCode == NGHTTP2_NO_ERROR || m_terminateRequested || m_connectionError) {
        return;
    }
    // nghttp2 terminates the session itself when the server breaks the protocol; this GOAWAY is the only
    // sign of it, and its debug data (or the error callback's text) says why.
    std::string reason = m_libraryMessage.empty() ? std::string(debugData) : m_libraryMessage;
    if (reason.empty()) {
        const std::string_view meaning = codeMeaning(errorCode);
        reason = meaning.empty() ? "no reason given" : "it sent " + std::string(meaning);
    }
    m_connectionError = Error{"the server broke the HTTP/2 protocol (" + reason + ", " +
                              nghttp2_http2_strerror(errorCode) + "); the connection was closed"};
}

std::size_t Http2Session::consume(std::int32_t stream, std::size_t n) {
    const auto it = m_streams.find(stream);
    if (it == m_streams.end()) {
        return 0;
    }
    const std::size_t count = std::min(n, it->second.unconsumed);
    if (count == 0) {
        return 0;
    }
    it->second.unconsumed -= count;
    m_unconsumedTotal -= count;
    if (!m_failed) {
        // Fails only when out of memory, which nghttp2 then reports from the next receive or send.
        nghttp2_session_consume(m_session.get(), stream, count);
    }
    return count;
}

std::size_t Http2Session::unconsumed(std::int32_t stream) const {
    const auto it = m_streams.find(stream);
    return it == m_streams.end() ? 0 : it->second.unconsumed;
}

std::size_t Http2Session::unconsumedTotal() const {
    return m_unconsumedTotal;
}

Result<void> Http2Session::setConnectionWindow(std::uint32_t bytes) {
    if (bytes > kMaxWindow) {
        return Error{"an HTTP/2 receive window can be at most 2147483647 bytes"};
    }
    if (m_failed) {
        return Error{"the HTTP/2 connection is closed"};
    }
    if (const int rv = nghttp2_session_set_local_window_size(m_session.get(), NGHTTP2_FLAG_NONE, 0,
                                                             static_cast<std::int32_t>(bytes));
        rv != 0) {
        return Error{"cannot set the HTTP/2 connection window: " + libraryError(rv)};
    }
    return {};
}

Result<void> Http2Session::setStreamWindow(std::int32_t stream, std::uint32_t bytes) {
    if (bytes > kMaxWindow) {
        return Error{"an HTTP/2 receive window can be at most 2147483647 bytes"};
    }
    if (!m_streams.contains(stream) || m_failed) {
        return Error{"HTTP/2 stream " + std::to_string(stream) + " is not open"};
    }
    if (const int rv = nghttp2_session_set_local_window_size(m_session.get(), NGHTTP2_FLAG_NONE, stream,
                                                             static_cast<std::int32_t>(bytes));
        rv != 0) {
        return Error{"cannot set the window of HTTP/2 stream " + std::to_string(stream) + ": " +
                     libraryError(rv)};
    }
    return {};
}

std::size_t Http2Session::activeStreams() const {
    return m_streams.size();
}

std::uint32_t Http2Session::remoteMaxConcurrentStreams() const {
    return nghttp2_session_get_remote_settings(m_session.get(), NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

void Http2Session::shutdown() {
    if (m_failed || m_shutdownRequested) {
        return;
    }
    m_shutdownRequested = true;
    // A client's GOAWAY names the last server-initiated stream (none, push is off); the server still
    // answers the requests it has, and the session finishes when they are done.
    nghttp2_submit_goaway(m_session.get(), NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(m_session.get()), NGHTTP2_NO_ERROR, nullptr,
                          0);
}

void Http2Session::terminate(std::uint32_t errorCode) {
    if (m_failed || m_terminateRequested) {
        return;
    }
    m_shutdownRequested = true;
    m_terminateRequested = true;
    nghttp2_session_terminate_session(m_session.get(), errorCode);
    closeAllStreams(StreamEnd{StreamEnd::Kind::ConnectionClosed, errorCode});
}

void Http2Session::connectionLost() {
    if (m_failed) {
        return;
    }
    m_failed = true;
    m_output.clear();
    closeAllStreams(StreamEnd{StreamEnd::Kind::ConnectionClosed, NGHTTP2_NO_ERROR});
}

void Http2Session::flush() {
    if (m_inLibrary || m_failed) {
        return;
    }
    m_inLibrary = true;
    ssize_t rv = 0;
    while (m_output.size() < kOutputHighWater) {
        const std::uint8_t* data = nullptr;
        rv = nghttp2_session_mem_send(m_session.get(), &data);
        if (rv <= 0) {
            break;
        }
        m_output.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(rv));
    }
    m_inLibrary = false;
    if (rv < 0) {
        failConnection(m_callbackError ? *m_callbackError
                                       : Error{"sending on the HTTP/2 connection failed: " +
                                               libraryError(static_cast<int>(rv))},
                       NGHTTP2_INTERNAL_ERROR);
        return;
    }
    for (const std::int32_t id : std::exchange(m_cancelledUnsent, {})) {
        if (const auto it = m_streams.find(id); it != m_streams.end() && !it->second.requestSent) {
            closeStream(id, *it->second.localEnd);
        }
    }
    // After a terminating GOAWAY nghttp2 neither reads nor closes the streams left; they end here.
    if (!nghttp2_session_want_read(m_session.get()) && !nghttp2_session_want_write(m_session.get())) {
        closeAllStreams(StreamEnd{StreamEnd::Kind::ConnectionClosed, m_goAwaySentCode});
    }
}

StreamEnd Http2Session::endOf(std::int32_t id, const Stream& stream, std::uint32_t closeCode) const {
    using Kind = StreamEnd::Kind;
    if (stream.localEnd) {
        return *stream.localEnd;
    }
    if (stream.endStreamReceived) {
        return StreamEnd{Kind::Complete, NGHTTP2_NO_ERROR};
    }
    if (stream.peerReset) {
        return StreamEnd{Kind::ResetByPeer, *stream.peerReset};
    }
    if ((m_goAwayReceived && id > m_peerLastStreamId) || !stream.requestSent) {
        return StreamEnd{Kind::NotProcessed, closeCode};
    }
    if (stream.resetSent) {
        // nghttp2 resets a stream itself when the response breaks HTTP/2 messaging rules.
        return StreamEnd{Kind::Malformed, *stream.resetSent};
    }
    return StreamEnd{Kind::ConnectionClosed, closeCode};
}

void Http2Session::closeStream(std::int32_t id, StreamEnd end) {
    const auto it = m_streams.find(id);
    if (it == m_streams.end()) {
        return;
    }
    const std::size_t unconsumed = it->second.unconsumed;
    m_unconsumedTotal -= unconsumed;
    m_streams.erase(it);
    if (unconsumed > 0 && !m_failed && !m_terminateRequested) {
        // The stream's window goes with it, but the connection window only comes back through consumption:
        // without this, every stream closed with unread data would shrink the connection for good.
        nghttp2_session_consume_connection(m_session.get(), unconsumed);
    }
    m_listener.onStreamClosed(id, end);
}

void Http2Session::closeAllStreams(StreamEnd end) {
    std::vector<std::int32_t> ids;
    ids.reserve(m_streams.size());
    for (const auto& entry : m_streams) {
        ids.push_back(entry.first);
    }
    std::sort(ids.begin(), ids.end());
    for (const std::int32_t id : ids) {
        // The listener may have closed more streams from its callback.
        const auto it = m_streams.find(id);
        if (it != m_streams.end()) {
            closeStream(id, it->second.requestSent ? end : StreamEnd{StreamEnd::Kind::NotProcessed, 0});
        }
    }
}

void Http2Session::failConnection(Error error, std::uint32_t errorCode) {
    m_failed = true;
    if (!m_connectionError) {
        m_connectionError = std::move(error);
    }
    closeAllStreams(StreamEnd{StreamEnd::Kind::ConnectionClosed, errorCode});
}

} // namespace nicer::net
