// HTTP/2 responses through the I/O-free client session (net/http2/Http2Session): the client sends one to four
// GETs, then the input's bytes arrive as the server's, in chunks of sizes the input chooses, between actions
// of the caller (consume, reset, ping, shutdown, another GET). Invariants:
//   - the body bytes delivered never exceed the DATA payload received (frames counted in the bytes fed);
//   - a stream's callbacks come in order: at most one header block, data only after it and never after the
//     caller reset the stream, and exactly one close, for streams that were submitted;
//   - unconsumed(), unconsumedTotal() and activeStreams() agree with what the listener saw and consumed;
//   - header blocks keep the limits of Options (field count, list size) and hold no pseudo-header.
//
// Input: byte 0 flags (bit 0: a valid empty server SETTINGS comes first; bit 1: manual flow control; bit 2:
// small stream windows; bit 3: small header limits; bit 4: leave output undrained), byte 1 the number of
// GETs (1 + b % 4), byte 2 the share of each DATA chunk the listener consumes at once (0..255), byte 3 a mask
// of the first streams the listener resets on their headers (low nibble) or their first data (high nibble),
// then operations: see run().

#include "FuzzSupport.h"
#include "net/http2/Http2Session.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace nicer;
using net::Http2Session;
using net::StreamEnd;

namespace {

/// Where the DATA frames are in the server's bytes, to bound what may be delivered.
class DataFrames {
public:
    explicit DataFrames(std::string_view bytes) {
        std::size_t at = 0;
        while (bytes.size() - at >= 9) {
            const auto* h = reinterpret_cast<const std::uint8_t*>(bytes.data() + at);
            const std::size_t length = (std::size_t{h[0]} << 16) | (std::size_t{h[1]} << 8) | h[2];
            if (h[3] == 0) { // DATA
                m_payloads.emplace_back(at + 9, at + 9 + length);
            }
            at += 9 + length;
            if (at > bytes.size()) {
                break;
            }
        }
    }

    /// DATA payload bytes (padding included) among the first @p fed bytes.
    std::size_t payloadWithin(std::size_t fed) const {
        std::size_t total = 0;
        for (const auto& [begin, end] : m_payloads) {
            if (fed > begin) {
                total += std::min(fed, end) - begin;
            }
        }
        return total;
    }

private:
    std::vector<std::pair<std::size_t, std::size_t>> m_payloads;
};

struct Recorder : Http2Session::Listener {
    struct Stream {
        std::size_t index = 0; ///< in order of submission
        bool headers = false;
        bool resetByUs = false;
        bool dataSeen = false;
        int closes = 0;
        std::size_t delivered = 0;
        std::size_t consumed = 0;
    };

    Http2Session* session = nullptr;
    Http2Session::Options options;
    std::map<std::int32_t, Stream> streams;
    std::size_t delivered = 0;
    std::size_t deliveredBound = 0; ///< DATA payload fed so far, updated before each receive()
    std::uint8_t consumeShare = 0;
    std::uint8_t resetMask = 0;

    Stream& open(std::int32_t id) {
        const auto it = streams.find(id);
        FUZZ_CHECK(it != streams.end());    // only streams the client submitted
        FUZZ_CHECK(it->second.closes == 0); // none after its close
        return it->second;
    }

    void reset(std::int32_t id, Stream& stream) {
        stream.resetByUs = true;
        session->resetStream(id);
    }

    void onResponseHeaders(std::int32_t id, int status, const Http2Session::Headers& headers) override {
        Stream& stream = open(id);
        FUZZ_CHECK(!stream.headers);
        FUZZ_CHECK(!stream.resetByUs);
        stream.headers = true;
        // nghttp2 lets only three digits through; the session holds back the interim (1xx) ones.
        FUZZ_CHECK(status >= 0 && status <= 999 && (status < 100 || status >= 200));
        FUZZ_CHECK(headers.size() <= options.maxHeaderCount);
        std::size_t listSize = 0;
        for (const auto& [name, value] : headers) {
            FUZZ_CHECK(!name.empty() && name.front() != ':');
            listSize += name.size() + value.size() + 32;
        }
        FUZZ_CHECK(listSize <= options.maxHeaderListSize);
        if (stream.index < 4 && ((resetMask >> stream.index) & 1) != 0) {
            reset(id, stream);
        }
    }

    void onData(std::int32_t id, std::span<const std::uint8_t> data) override {
        Stream& stream = open(id);
        FUZZ_CHECK(stream.headers);
        FUZZ_CHECK(!stream.resetByUs);
        FUZZ_CHECK(!data.empty());
        stream.delivered += data.size();
        delivered += data.size();
        FUZZ_CHECK(delivered <= deliveredBound);
        if (options.manualFlowControl && consumeShare > 0) {
            const std::size_t want = data.size() * consumeShare / 255;
            const std::size_t got = session->consume(id, want);
            FUZZ_CHECK(got == std::min(want, stream.delivered - stream.consumed));
            stream.consumed += got;
        }
        if (!stream.dataSeen && stream.index < 4 && ((resetMask >> (4 + stream.index)) & 1) != 0) {
            reset(id, stream);
        }
        stream.dataSeen = true;
    }

    void onStreamClosed(std::int32_t id, StreamEnd end) override {
        Stream& stream = open(id);
        ++stream.closes;
        FUZZ_CHECK(!end.describe().empty());
        // A stream the caller gave up ends as given up, unless it had ended before the reset went out.
        if (end.kind == StreamEnd::Kind::Cancelled) {
            FUZZ_CHECK(stream.resetByUs);
        }
    }

    /// What the session says of its streams agrees with what was delivered and consumed.
    void checkAccounts() const {
        std::size_t open = 0;
        std::size_t unconsumed = 0;
        for (const auto& [id, stream] : streams) {
            if (stream.closes > 0) {
                FUZZ_CHECK(session->unconsumed(id) == 0);
                continue;
            }
            ++open;
            const std::size_t expected = options.manualFlowControl ? stream.delivered - stream.consumed : 0;
            FUZZ_CHECK(session->unconsumed(id) == expected);
            unconsumed += expected;
        }
        FUZZ_CHECK(session->activeStreams() == open);
        FUZZ_CHECK(session->unconsumedTotal() == unconsumed);
    }
};

class Input {
public:
    Input(const std::uint8_t* data, std::size_t size)
        : m_data(data)
        , m_size(size) {}

    bool empty() const { return m_at >= m_size; }
    std::uint8_t byte() { return m_at < m_size ? m_data[m_at++] : 0; }
    std::uint16_t twoBytes() {
        const std::uint16_t high = byte();
        return static_cast<std::uint16_t>(high << 8 | byte());
    }
    std::string_view take(std::size_t n) {
        n = std::min(n, m_size - std::min(m_at, m_size));
        const std::string_view out(reinterpret_cast<const char*>(m_data + m_at), n);
        m_at += n;
        return out;
    }

private:
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_at = 0;
};

/// An operation: its kind and, for a feed, the server's bytes.
struct Operation {
    std::uint8_t code = 0;
    std::uint16_t argument = 0;
    std::string_view bytes;
};

constexpr std::string_view kEmptySettings{"\0\0\0\x04\0\0\0\0\0", 9};

std::vector<Operation> operations(Input& input) {
    // Each operation is a byte: its low two bits are the kind.
    //   0: feed the next N bytes, N in the next two bytes (big-endian);
    //   1: feed the next (byte >> 2) bytes;
    //   2: consume the next two bytes' worth on stream (byte >> 2) % 4;
    //   3: an action, (byte >> 2) % 8: reset a stream, ping, shutdown, another GET, terminate, shrink or
    //      grow a stream's window, set the connection's window; the next byte says which stream or how much.
    std::vector<Operation> ops;
    while (!input.empty()) {
        Operation op;
        op.code = input.byte();
        switch (op.code & 3) {
        case 0:
            op.bytes = input.take(input.twoBytes());
            break;
        case 1:
            op.bytes = input.take(op.code >> 2);
            break;
        case 2:
            op.argument = input.twoBytes();
            break;
        default:
            op.argument = input.byte();
            break;
        }
        ops.push_back(op);
    }
    return ops;
}

Http2Session::Request get(std::size_t n) {
    Http2Session::Request request;
    request.authority = "example.org";
    request.path = "/file" + std::to_string(n);
    request.headers = {{"range", "bytes=0-"}};
    return request;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input input(data, size);
    const std::uint8_t flags = input.byte();
    const std::size_t gets = 1 + input.byte() % 4;
    Recorder recorder;
    recorder.consumeShare = input.byte();
    recorder.resetMask = input.byte();
    recorder.options.manualFlowControl = (flags & 2) != 0;
    if ((flags & 4) != 0) {
        recorder.options.streamWindow = 1024;
        recorder.options.connectionWindow = 4096;
    }
    if ((flags & 8) != 0) {
        recorder.options.maxHeaderListSize = 256;
        recorder.options.maxHeaderCount = 4;
    }
    const bool drain = (flags & 16) == 0;
    const auto ops = operations(input);

    std::string server((flags & 1) != 0 ? kEmptySettings : std::string_view());
    for (const Operation& op : ops) {
        server += op.bytes;
    }
    const DataFrames frames(server);

    std::int64_t ticks = 0;
    auto created = Http2Session::create(recorder, recorder.options, [&ticks] {
        return std::chrono::steady_clock::time_point(std::chrono::microseconds(++ticks));
    });
    FUZZ_CHECK(created.ok());
    const std::unique_ptr<Http2Session> session = std::move(created).value();
    recorder.session = session.get();

    std::vector<std::int32_t> ids;
    const auto submit = [&] {
        if (const auto id = session->submitGet(get(ids.size()))) {
            FUZZ_CHECK(recorder.streams.count(*id) == 0);
            recorder.streams[*id].index = ids.size();
            ids.push_back(*id);
        } else {
            FUZZ_CHECK(!session->acceptsRequests());
        }
    };
    for (std::size_t i = 0; i < gets; ++i) {
        submit();
    }
    const auto flush = [&] {
        const std::string_view out = session->output();
        if (drain) {
            session->drainOutput(out.size());
        }
    };
    flush();

    std::size_t fed = 0;
    const auto feed = [&](std::string_view bytes) {
        if (bytes.empty()) {
            return;
        }
        recorder.deliveredBound = frames.payloadWithin(fed + bytes.size());
        (void)session->receive(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
        fed += bytes.size();
    };
    const auto stream = [&](std::size_t n) { return ids.empty() ? 1 : ids[n % ids.size()]; };

    feed((flags & 1) != 0 ? kEmptySettings : std::string_view());
    for (const Operation& op : ops) {
        switch (op.code & 3) {
        case 0:
        case 1:
            feed(op.bytes);
            break;
        case 2: {
            const std::int32_t id = stream(op.code >> 2);
            const auto it = recorder.streams.find(id);
            const std::size_t got = session->consume(id, op.argument);
            if (it == recorder.streams.end() || it->second.closes > 0 ||
                !recorder.options.manualFlowControl) {
                FUZZ_CHECK(got == 0);
            } else {
                FUZZ_CHECK(got ==
                           std::min<std::size_t>(op.argument, it->second.delivered - it->second.consumed));
                it->second.consumed += got;
            }
            break;
        }
        default:
            switch ((op.code >> 2) % 8) {
            case 0:
                if (const auto it = recorder.streams.find(stream(op.argument));
                    it != recorder.streams.end() && it->second.closes == 0) {
                    recorder.reset(it->first, it->second);
                }
                break;
            case 1:
                session->ping();
                break;
            case 2:
                session->shutdown();
                break;
            case 3:
                if (ids.size() < 16) {
                    submit();
                }
                break;
            case 4:
                session->terminate(op.argument);
                break;
            case 5:
                (void)session->setStreamWindow(stream(op.argument), 0);
                break;
            case 6:
                (void)session->setStreamWindow(stream(op.argument), 1u << (op.argument % 31));
                break;
            default:
                (void)session->setConnectionWindow(1u << (op.argument % 31));
                break;
            }
            break;
        }
        flush();
        recorder.checkAccounts();
    }

    // The transport goes: every stream ends, each exactly once.
    session->connectionLost();
    FUZZ_CHECK(session->activeStreams() == 0);
    FUZZ_CHECK(session->unconsumedTotal() == 0);
    FUZZ_CHECK(session->finished());
    for (const auto& [id, s] : recorder.streams) {
        FUZZ_CHECK(s.closes == 1);
    }
    FUZZ_CHECK(recorder.delivered <= frames.payloadWithin(fed));
    return 0;
}
