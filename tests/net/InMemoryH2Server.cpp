#include "net/InMemoryH2Server.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace nicer::net::test {

namespace {

const std::uint8_t* bytesOf(std::string_view text) {
    return reinterpret_cast<const std::uint8_t*>(text.data());
}

nghttp2_nv makeNv(std::string_view name, std::string_view value) {
    return nghttp2_nv{const_cast<std::uint8_t*>(bytesOf(name)), const_cast<std::uint8_t*>(bytesOf(value)),
                      name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

std::vector<nghttp2_nv> headerBlock(std::string_view status, const InMemoryH2Server::Headers& headers) {
    std::vector<nghttp2_nv> nva;
    if (!status.empty()) {
        nva.push_back(makeNv(":status", status));
    }
    for (const auto& [name, value] : headers) {
        nva.push_back(makeNv(name, value));
    }
    return nva;
}

} // namespace

void InMemoryH2Server::SessionDeleter::operator()(nghttp2_session* session) const {
    nghttp2_session_del(session);
}

struct InMemoryH2Server::Callbacks {
    template <typename Body>
    static int guarded(void* userData, Body&& body) {
        try {
            return body(*static_cast<InMemoryH2Server*>(userData));
        } catch (...) {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    }

    static int onBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* userData) {
        return guarded(userData, [&](InMemoryH2Server& self) {
            if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
                self.m_incoming[frame->hd.stream_id].stream = frame->hd.stream_id;
                ++self.m_open;
            }
            return 0;
        });
    }

    static int onHeader(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                        std::size_t nameLength, const std::uint8_t* value, std::size_t valueLength,
                        std::uint8_t, void* userData) {
        return guarded(userData, [&](InMemoryH2Server& self) {
            auto& request = self.m_incoming[frame->hd.stream_id];
            std::string n(reinterpret_cast<const char*>(name), nameLength);
            std::string v(reinterpret_cast<const char*>(value), valueLength);
            if (n == ":path") {
                request.path = v;
            }
            request.headers.emplace_back(std::move(n), std::move(v));
            return 0;
        });
    }

    static int onFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* userData) {
        return guarded(userData, [&](InMemoryH2Server& self) {
            const std::int32_t id = frame->hd.stream_id;
            switch (frame->hd.type) {
            case NGHTTP2_HEADERS:
                if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0 && self.m_incoming.contains(id)) {
                    const Request request = self.m_incoming[id];
                    self.m_requests.push_back(request);
                    if (auto response = self.m_handler(request)) {
                        self.respond(id, *response);
                    }
                }
                break;
            case NGHTTP2_RST_STREAM:
                self.m_resets.emplace_back(id, frame->rst_stream.error_code);
                break;
            case NGHTTP2_GOAWAY:
                self.m_goAways.push_back(frame->goaway.error_code);
                break;
            default:
                break;
            }
            return 0;
        });
    }

    static int onFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* userData) {
        return guarded(userData, [&](InMemoryH2Server& self) {
            if (frame->hd.type == NGHTTP2_DATA) {
                self.m_dataSent[frame->hd.stream_id] += frame->hd.length;
            }
            return 0;
        });
    }

    static int onStreamClose(nghttp2_session*, std::int32_t id, std::uint32_t, void* userData) {
        return guarded(userData, [&](InMemoryH2Server& self) {
            if (self.m_incoming.erase(id) > 0) {
                --self.m_open;
            }
            self.m_bodies.erase(id);
            return 0;
        });
    }

    static ssize_t readBody(nghttp2_session* session, std::int32_t id, std::uint8_t* buffer,
                            std::size_t length, std::uint32_t* dataFlags, nghttp2_data_source*,
                            void* userData) {
        auto& self = *static_cast<InMemoryH2Server*>(userData);
        const auto it = self.m_bodies.find(id);
        if (it == self.m_bodies.end()) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        Body& body = it->second;
        const std::size_t count = std::min(length, body.data.size() - body.offset);
        std::memcpy(buffer, body.data.data() + body.offset, count);
        body.offset += count;
        if (body.offset == body.data.size()) {
            *dataFlags |= NGHTTP2_DATA_FLAG_EOF;
        }
        (void)session;
        return static_cast<ssize_t>(count);
    }
};

InMemoryH2Server::InMemoryH2Server(Handler handler, Settings settings)
    : m_handler(std::move(handler)) {
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) {
        throw std::runtime_error("nghttp2_session_callbacks_new failed");
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &Callbacks::onBeginHeaders);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, &Callbacks::onHeader);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Callbacks::onFrameRecv);
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, &Callbacks::onFrameSend);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Callbacks::onStreamClose);
    nghttp2_session* session = nullptr;
    const int rv = nghttp2_session_server_new(&session, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    if (rv != 0) {
        throw std::runtime_error("nghttp2_session_server_new failed");
    }
    m_session.reset(session);
    // Same-urgency streams are then served in stream-id order, which makes byte counts in tests exact.
    const nghttp2_settings_entry entries[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, settings.maxConcurrentStreams},
        {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
    };
    if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, entries, std::size(entries)) != 0) {
        throw std::runtime_error("nghttp2_submit_settings failed");
    }
}

InMemoryH2Server::InMemoryH2Server(Handler handler)
    : InMemoryH2Server(std::move(handler), Settings{}) {}

InMemoryH2Server::~InMemoryH2Server() = default;

bool InMemoryH2Server::receive(std::string_view bytes) {
    return nghttp2_session_mem_recv(m_session.get(), bytesOf(bytes), bytes.size()) ==
           static_cast<ssize_t>(bytes.size());
}

std::string InMemoryH2Server::takeOutput() {
    std::string output;
    for (;;) {
        const std::uint8_t* data = nullptr;
        const ssize_t n = nghttp2_session_mem_send(m_session.get(), &data);
        if (n <= 0) {
            return output;
        }
        output.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
}

void InMemoryH2Server::respond(std::int32_t stream, const Response& response) {
    if (response.earlyHints) {
        const auto hints = headerBlock("103", *response.earlyHints);
        nghttp2_submit_headers(m_session.get(), NGHTTP2_FLAG_NONE, stream, nullptr, hints.data(),
                               hints.size(), nullptr);
    }
    const std::string status = response.omitStatus ? std::string() : std::to_string(response.status);
    const auto nva = headerBlock(status, response.headers);
    if (response.body.empty()) {
        nghttp2_submit_response(m_session.get(), stream, nva.data(), nva.size(), nullptr);
        return;
    }
    m_bodies[stream] = Body{response.body, 0};
    nghttp2_data_provider provider{};
    provider.read_callback = &Callbacks::readBody;
    nghttp2_submit_response(m_session.get(), stream, nva.data(), nva.size(), &provider);
}

void InMemoryH2Server::resetStream(std::int32_t stream, std::uint32_t errorCode) {
    nghttp2_submit_rst_stream(m_session.get(), NGHTTP2_FLAG_NONE, stream, errorCode);
}

void InMemoryH2Server::goAway(std::int32_t lastStreamId, std::uint32_t errorCode) {
    nghttp2_submit_goaway(m_session.get(), NGHTTP2_FLAG_NONE, lastStreamId, errorCode, nullptr, 0);
}

std::size_t InMemoryH2Server::dataSent(std::int32_t stream) const {
    const auto it = m_dataSent.find(stream);
    return it == m_dataSent.end() ? 0 : it->second;
}

std::uint32_t InMemoryH2Server::clientSetting(int id) const {
    return nghttp2_session_get_remote_settings(m_session.get(), static_cast<nghttp2_settings_id>(id));
}

std::int32_t InMemoryH2Server::connectionSendWindow() const {
    return nghttp2_session_get_remote_window_size(m_session.get());
}

} // namespace nicer::net::test
