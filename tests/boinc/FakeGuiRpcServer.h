#pragma once

// A GUI RPC server for the client's tests: a thread on 127.0.0.1 (a port of its own) that reads framed
// requests and answers each as its handler says: a recorded reply, part of one, nothing at all, or a
// closed connection. One connection at a time, as the client uses it.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace nicer::test {

class FakeGuiRpcServer {
public:
    /// What the server does with one request.
    struct Answer {
        std::string bytes;  ///< sent as they are: a whole framed reply, a part of one, or nothing
        bool close = false; ///< close the connection after sending them

        /// @p reply (a whole reply without its \003, e.g. a recorded one) framed and sent.
        static Answer reply(std::string_view reply);
        /// Nothing: the request waits for ever.
        static Answer silence() { return {}; }
    };
    /// Answers @p request (the body, without the <boinc_gui_rpc_request> envelope) on the @p connection-th
    /// connection (from 1). Runs on the server's thread.
    using Handler = std::function<Answer(const std::string& request, int connection)>;

    explicit FakeGuiRpcServer(Handler handler);
    ~FakeGuiRpcServer();
    FakeGuiRpcServer(const FakeGuiRpcServer&) = delete;
    FakeGuiRpcServer& operator=(const FakeGuiRpcServer&) = delete;

    /// Signs in with @p password like the real client (a nonce, then <authorized/>, or <unauthorized/> and a
    /// closed connection) and answers each other request with @p replies[its name] (whole replies without
    /// \003), or <error>unrecognized op</error>.
    static Handler standard(std::string password, std::map<std::string, std::string> replies);
    /// The nonce standard() hands out.
    static constexpr std::string_view kNonce = "1795549132.215376";

    std::uint16_t port() const { return m_port; }
    /// The request bodies received so far, in order, over all connections.
    std::vector<std::string> requests() const;
    /// Connections accepted so far.
    int connections() const;

private:
    void run();
    void serve(int fd, int connection);

    Handler m_handler;
    int m_listener = -1;
    int m_stop[2] = {-1, -1};
    std::uint16_t m_port = 0;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_requests;
    int m_connections = 0;
    std::thread m_thread;
};

} // namespace nicer::test
