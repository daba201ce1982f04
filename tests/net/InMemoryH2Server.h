#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct nghttp2_session;

namespace nicer::net::test {

/// An nghttp2 server session in memory, the peer Http2Session's tests talk to: it answers requests with
/// configurable responses, can reset streams and send GOAWAY, and records what it saw and sent.
class InMemoryH2Server {
public:
    using Headers = std::vector<std::pair<std::string, std::string>>;

    struct Request {
        std::int32_t stream = 0;
        std::string path;
        /// All fields as received, pseudo-headers included.
        Headers headers;
    };

    struct Response {
        int status = 200;
        Headers headers;
        std::string body;
        /// Sends a "103 Early Hints" header block with these fields before the response.
        std::optional<Headers> earlyHints;
        /// Leaves :status out, which makes the response malformed.
        bool omitStatus = false;
    };

    /// The response to a request, or nullopt to answer later with respond().
    using Handler = std::function<std::optional<Response>(const Request&)>;

    struct Settings {
        std::uint32_t maxConcurrentStreams = 100;
    };

    InMemoryH2Server(Handler handler, Settings settings);
    explicit InMemoryH2Server(Handler handler);
    ~InMemoryH2Server();
    InMemoryH2Server(const InMemoryH2Server&) = delete;
    InMemoryH2Server& operator=(const InMemoryH2Server&) = delete;

    /// Feeds bytes from the client; false if nghttp2 rejected them.
    bool receive(std::string_view bytes);
    /// Everything the server has to send now (limited by the client's windows).
    std::string takeOutput();

    void respond(std::int32_t stream, const Response& response);
    void resetStream(std::int32_t stream, std::uint32_t errorCode);
    void goAway(std::int32_t lastStreamId, std::uint32_t errorCode);

    const std::vector<Request>& requests() const { return m_requests; }
    /// DATA payload bytes sent on @p stream so far.
    std::size_t dataSent(std::int32_t stream) const;
    /// (stream, error code) of every RST_STREAM received from the client.
    const std::vector<std::pair<std::int32_t, std::uint32_t>>& resetsReceived() const { return m_resets; }
    /// Error codes of GOAWAY frames received from the client.
    const std::vector<std::uint32_t>& goAwaysReceived() const { return m_goAways; }
    /// A SETTINGS value the client sent.
    std::uint32_t clientSetting(int id) const;
    /// How much the server may still send on the whole connection (the client's connection window).
    std::int32_t connectionSendWindow() const;
    /// Streams the server considers open.
    std::size_t openStreams() const { return m_open; }

private:
    struct Callbacks;

    struct Body {
        std::string data;
        std::size_t offset = 0;
    };

    struct SessionDeleter {
        void operator()(nghttp2_session* session) const;
    };

    Handler m_handler;
    std::unique_ptr<nghttp2_session, SessionDeleter> m_session;
    std::map<std::int32_t, Request> m_incoming;
    std::map<std::int32_t, Body> m_bodies;
    std::map<std::int32_t, std::size_t> m_dataSent;
    std::vector<Request> m_requests;
    std::vector<std::pair<std::int32_t, std::uint32_t>> m_resets;
    std::vector<std::uint32_t> m_goAways;
    std::size_t m_open = 0;
};

} // namespace nicer::net::test
