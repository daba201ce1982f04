#include "net/MisbehavingH2Server.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace nicer::net::test {

namespace {

nghttp2_nv makeNv(const std::string& name, const std::string& value) {
    return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                      reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
                      value.size(), NGHTTP2_NV_FLAG_NONE};
}

} // namespace

struct MisbehavingH2Server::Stream {
    std::string path;
    std::string range;
    std::string priority;
    Behaviour behaviour;
    bool misbehave = false;
    std::string body; // the bytes this response carries
    std::size_t sent = 0;
    // A trickle waits for its next byte (NGHTTP2_ERR_DEFERRED) until this time.
    std::optional<std::chrono::steady_clock::time_point> trickleDue;
};

struct MisbehavingH2Server::Client {
    int fd = -1;
    int number = 0;
    nghttp2_session* session = nullptr;
    std::map<std::int32_t, Stream> streams;
    std::string out;
    bool goAway = false; // close once the GOAWAY is out
    bool done = false;
    bool mute = false; // reads, never writes (Greeting::Silent and SettingsOnly)
    MisbehavingH2Server* server = nullptr;

    ~Client() {
        if (server) {
            server->m_open -= static_cast<int>(streams.size());
        }
        if (session) {
            nghttp2_session_del(session);
        }
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

struct MisbehavingH2Server::Callbacks {
    static int onBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* data) {
        auto& client = *static_cast<Client*>(data);
        if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
            client.streams[frame->hd.stream_id] = Stream{};
            const int open = ++client.server->m_open;
            int seen = client.server->m_maxOpen.load();
            while (open > seen && !client.server->m_maxOpen.compare_exchange_weak(seen, open)) {
            }
        }
        return 0;
    }

    static int onHeader(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                        std::size_t nameLength, const std::uint8_t* value, std::size_t valueLength,
                        std::uint8_t, void* data) {
        auto& client = *static_cast<Client*>(data);
        const auto it = client.streams.find(frame->hd.stream_id);
        if (it == client.streams.end()) {
            return 0;
        }
        const std::string n(reinterpret_cast<const char*>(name), nameLength);
        const std::string v(reinterpret_cast<const char*>(value), valueLength);
        if (n == ":path") {
            it->second.path = v;
        } else if (n == "range") {
            it->second.range = v;
        } else if (n == "priority") {
            it->second.priority = v;
        }
        return 0;
    }

    static int onFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* data) {
        auto& client = *static_cast<Client*>(data);
        if (frame->hd.type == NGHTTP2_HEADERS && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0 &&
            client.streams.contains(frame->hd.stream_id)) {
            client.server->respond(client, frame->hd.stream_id);
        }
        return 0;
    }

    static int onStreamClose(nghttp2_session*, std::int32_t stream, std::uint32_t, void* data) {
        auto& client = *static_cast<Client*>(data);
        if (client.streams.erase(stream) > 0) {
            --client.server->m_open;
        }
        return 0;
    }

    static ssize_t readBody(nghttp2_session*, std::int32_t id, std::uint8_t* buffer, std::size_t length,
                            std::uint32_t* flags, nghttp2_data_source*, void* data) {
        auto& client = *static_cast<Client*>(data);
        const auto it = client.streams.find(id);
        if (it == client.streams.end()) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        Stream& stream = it->second;
        const Behaviour& b = stream.behaviour;
        std::size_t limit = stream.body.size();
        if (stream.misbehave) {
            for (const auto& trigger : {b.endAfter, b.resetAfter, b.stallAfter, b.goAwayAfter}) {
                if (trigger) {
                    limit = std::min(limit, *trigger);
                }
            }
        }
        if (stream.misbehave && b.trickleAfter && stream.sent >= *b.trickleAfter && stream.sent < limit) {
            const auto now = std::chrono::steady_clock::now();
            if (stream.trickleDue && now < *stream.trickleDue) {
                return NGHTTP2_ERR_DEFERRED; // run() resumes it when the time comes
            }
            stream.trickleDue = now + b.trickleEvery;
            buffer[0] = static_cast<std::uint8_t>(stream.body[stream.sent++]);
            if (stream.sent == stream.body.size()) {
                *flags |= NGHTTP2_DATA_FLAG_EOF;
            }
            return 1;
        }
        if (stream.sent >= limit) {
            if (stream.misbehave && b.resetAfter && stream.sent >= *b.resetAfter) {
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; // nghttp2 resets with INTERNAL_ERROR
            }
            if (stream.misbehave && b.stallAfter && stream.sent >= *b.stallAfter) {
                return NGHTTP2_ERR_DEFERRED; // never resumed
            }
            if (stream.misbehave && b.goAwayAfter && stream.sent >= *b.goAwayAfter) {
                client.goAway = true;
                return NGHTTP2_ERR_DEFERRED;
            }
            *flags |= NGHTTP2_DATA_FLAG_EOF; // the whole body, or endAfter
            return 0;
        }
        const std::size_t count = std::min(length, limit - stream.sent);
        std::memcpy(buffer, stream.body.data() + stream.sent, count);
        stream.sent += count;
        if (stream.sent == stream.body.size() && !(stream.misbehave && limit < stream.body.size())) {
            *flags |= NGHTTP2_DATA_FLAG_EOF;
        }
        return static_cast<ssize_t>(count);
    }
};

MisbehavingH2Server::MisbehavingH2Server() {
    m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (m_listener < 0 || ::bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(m_listener, 16) != 0 ||
        ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
        ::pipe2(m_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        throw std::runtime_error(std::string("MisbehavingH2Server: cannot listen: ") + std::strerror(errno));
    }
    m_port = ntohs(address.sin_port);
    m_thread = std::thread([this] { run(); });
}

MisbehavingH2Server::~MisbehavingH2Server() {
    const char stop = 1;
    (void)!::write(m_wake[1], &stop, 1);
    m_thread.join();
    ::close(m_listener);
    ::close(m_wake[0]);
    ::close(m_wake[1]);
}

void MisbehavingH2Server::serve(const std::string& path, Behaviour behaviour) {
    const std::lock_guard lock(m_mutex);
    m_paths[path] = std::move(behaviour);
}

void MisbehavingH2Server::greet(Greeting greeting, std::string raw) {
    const std::lock_guard lock(m_mutex);
    m_greeting = greeting;
    m_greetingRaw = std::move(raw);
}

std::string MisbehavingH2Server::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + path;
}

std::vector<MisbehavingH2Server::Request> MisbehavingH2Server::requests() const {
    const std::lock_guard lock(m_mutex);
    return m_requests;
}

void MisbehavingH2Server::respond(Client& client, std::int32_t id) {
    Stream& stream = client.streams[id];
    std::optional<Behaviour> behaviour;
    {
        const std::lock_guard lock(m_mutex);
        m_requests.push_back(Request{stream.path, stream.range, stream.priority, client.number});
        if (const auto it = m_paths.find(stream.path); it != m_paths.end()) {
            behaviour = it->second;
            stream.misbehave = m_served[stream.path]++ < it->second.times;
        }
    }
    if (!behaviour) {
        const std::string status = ":status", notFound = "404";
        const nghttp2_nv nva[] = {makeNv(status, notFound)};
        nghttp2_submit_response(client.session, id, nva, 1, nullptr);
        return;
    }
    stream.behaviour = *behaviour;
    if (stream.misbehave && behaviour->refuse) {
        nghttp2_submit_rst_stream(client.session, NGHTTP2_FLAG_NONE, id, behaviour->refuseCode);
        return;
    }
    if (stream.misbehave && behaviour->raw) {
        // Behind what nghttp2 already gave us: its queued frames follow, all whole.
        client.out += behaviour->raw(id);
        return;
    }
    const std::string& body = behaviour->body;
    std::string status = "200";
    std::string contentRange;
    std::size_t from = 0;
    if (behaviour->honourRange && stream.range.starts_with("bytes=") && stream.range.ends_with("-")) {
        from = std::stoul(stream.range.substr(6, stream.range.size() - 7));
        if (from >= body.size()) {
            status = "416";
            contentRange = "bytes */" + std::to_string(body.size());
            from = body.size();
        } else {
            status = "206";
            contentRange = "bytes " + std::to_string(from) + "-" + std::to_string(body.size() - 1) + "/" +
                           std::to_string(body.size());
        }
    }
    stream.body = status == "416" ? std::string() : body.substr(from);
    const std::string length = std::to_string(
        stream.misbehave && behaviour->contentLength ? *behaviour->contentLength : stream.body.size());
    const std::string statusName = ":status", lengthName = "content-length", rangeName = "content-range";
    std::vector<nghttp2_nv> nva{makeNv(statusName, status), makeNv(lengthName, length)};
    if (!contentRange.empty()) {
        nva.push_back(makeNv(rangeName, contentRange));
    }
    nghttp2_data_provider provider{};
    provider.read_callback = &Callbacks::readBody;
    nghttp2_submit_response(client.session, id, nva.data(), nva.size(), &provider);
}

bool MisbehavingH2Server::serviceClient(Client& client, bool readable) {
    if (client.mute) {
        std::uint8_t buffer[16384];
        for (;;) {
            const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                return false;
            }
            if (n < 0) {
                break;
            }
        }
        while (!client.out.empty()) {
            const ssize_t n = ::send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
            if (n <= 0) {
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
            }
            client.out.erase(0, static_cast<std::size_t>(n));
        }
        return true;
    }
    for (auto& [id, stream] : client.streams) {
        if (stream.trickleDue && std::chrono::steady_clock::now() >= *stream.trickleDue) {
            nghttp2_session_resume_data(client.session, id);
        }
    }
    if (readable) {
        std::uint8_t buffer[16384];
        for (;;) {
            const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, 0);
            if (n == 0) {
                return false;
            }
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    break;
                }
                return false;
            }
            if (nghttp2_session_mem_recv(client.session, buffer, static_cast<std::size_t>(n)) < 0) {
                return false;
            }
        }
    }
    for (;;) {
        while (client.out.size() < 256 * 1024) {
            const std::uint8_t* data = nullptr;
            const ssize_t n = nghttp2_session_mem_send(client.session, &data);
            if (n <= 0) {
                break;
            }
            client.out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
        }
        if (client.goAway && !client.done) {
            client.done = true;
            nghttp2_submit_goaway(client.session, NGHTTP2_FLAG_NONE,
                                  nghttp2_session_get_last_proc_stream_id(client.session), NGHTTP2_NO_ERROR,
                                  nullptr, 0);
            continue; // pull the GOAWAY out too
        }
        break;
    }
    while (!client.out.empty()) {
        const ssize_t n = ::send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            return false;
        }
        client.out.erase(0, static_cast<std::size_t>(n));
    }
    if (client.done && client.out.empty()) {
        return false; // GOAWAY sent: drop the connection with the responses cut
    }
    return nghttp2_session_want_read(client.session) || nghttp2_session_want_write(client.session) ||
           !client.out.empty();
}

void MisbehavingH2Server::run() {
    std::vector<std::unique_ptr<Client>> clients;
    nghttp2_session_callbacks* callbacks = nullptr;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &Callbacks::onBeginHeaders);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, &Callbacks::onHeader);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Callbacks::onFrameRecv);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Callbacks::onStreamClose);
    for (;;) {
        std::vector<pollfd> fds{{m_wake[0], POLLIN, 0}, {m_listener, POLLIN, 0}};
        for (const auto& client : clients) {
            fds.push_back({client->fd, static_cast<short>(POLLIN | (client->out.empty() ? 0 : POLLOUT)), 0});
        }
        // A short timeout: deferred streams and pending output are looked at again now and then, a trickle
        // when its next byte is due.
        int timeout = 50;
        const auto now = std::chrono::steady_clock::now();
        for (const auto& client : clients) {
            for (const auto& [id, stream] : client->streams) {
                if (stream.trickleDue) {
                    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*stream.trickleDue - now);
                    timeout = std::clamp(static_cast<int>(wait.count()), 1, timeout);
                }
            }
        }
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
            break;
        }
        if (fds[0].revents != 0) {
            break;
        }
        if ((fds[1].revents & POLLIN) != 0) {
            const int fd = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                auto client = std::make_unique<Client>();
                client->fd = fd;
                client->number = ++m_connections;
                client->server = this;
                nghttp2_session_server_new(&client->session, callbacks, client.get());
                // 128, not the 100 a client assumes until SETTINGS arrive: a test can see that they did.
                const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 128}};
                nghttp2_submit_settings(client->session, NGHTTP2_FLAG_NONE, settings, 1);
                Greeting greeting = Greeting::Normal;
                {
                    const std::lock_guard lock(m_mutex);
                    greeting = m_greeting;
                    client->out = m_greetingRaw;
                }
                if (greeting != Greeting::Normal) {
                    client->mute = true;
                    client->out.clear();
                }
                if (greeting != Greeting::Silent) {
                    // The SETTINGS go first, before any raw greeting.
                    const std::uint8_t* data = nullptr;
                    const ssize_t n = nghttp2_session_mem_send(client->session, &data);
                    client->out.insert(0, reinterpret_cast<const char*>(data),
                                       static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
                }
                clients.push_back(std::move(client));
            }
        }
        for (std::size_t i = 0; i < clients.size();) {
            const auto& polled = i + 2 < fds.size() ? fds[i + 2] : pollfd{-1, 0, 0};
            const bool readable = polled.fd == clients[i]->fd && (polled.revents & (POLLIN | POLLHUP)) != 0;
            if (!serviceClient(*clients[i], readable)) {
                clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            ++i;
        }
    }
    clients.clear();
    nghttp2_session_callbacks_del(callbacks);
}

} // namespace nicer::net::test
