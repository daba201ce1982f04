#pragma once

#include "boinc/GuiRpcProtocol.h"
#include "libsystemd/Event.h"
#include "libsystemd/IoSource.h"
#include "libsystemd/Timer.h"
#include "util/Result.h"
#include "util/UniqueFd.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <sys/socket.h>

namespace nicer::boinc {

/**
 * A connection to the BOINC client's GUI RPC on an sd-event loop. It connects on the first call, signs in
 * with the password (auth1, auth2), then sends the queued calls one at a time, in order, each when the
 * previous one has its reply; the connection stays open for the next calls. Nothing blocks the loop.
 *
 * Every callback comes from the loop, never from inside call(). On any failure (refused, closed, reset,
 * timed out, password refused, a reply too large) the connection is closed and every call still pending
 * gets the same error, which says what happened and at which address; the next call connects again.
 *
 * A callback may make new calls, and may destroy the client: the calls still pending are then dropped
 * without their callbacks. Destroying the client closes the connection and drops pending callbacks too.
 */
class GuiRpcClient {
public:
    /// The reply without its \003 (e.g. "<boinc_gui_rpc_reply>\n<success/>\n</boinc_gui_rpc_reply>\n"), or
    /// why there is none. BOINC's own <error> replies are replies: the parsers of GuiRpcReplies.h read them.
    using Callback = std::function<void(Result<std::string> reply)>;

    /// A client of the GUI RPC at @p host:@p port: an IPv4 or IPv6 address ("127.0.0.1", "::1", "[::1]") or
    /// "localhost" (127.0.0.1, as BOINC listens there). Other names are refused, since resolving them
    /// would block the loop. Connects only when called.
    static Result<std::unique_ptr<GuiRpcClient>> create(sd_event* event, const std::string& host,
                                                        std::uint16_t port, std::string password);
    ~GuiRpcClient();
    GuiRpcClient(const GuiRpcClient&) = delete;
    GuiRpcClient& operator=(const GuiRpcClient&) = delete;

    /// Queues the request @p body (e.g. "<get_cc_status/>\n"; values in it escaped with xmlEscape()) and
    /// calls @p done with its reply. A request larger than the client reads (kMaxRequestBytes) fails
    /// without being sent, since the client would drop the connection.
    void call(std::string body, Callback done);

    /// How long to wait for each step (the connection, each half of the sign-in, each reply) before giving
    /// up on the connection; 10 s unless set. Applies from the next step on.
    void setTimeout(std::chrono::milliseconds timeout) { m_timeout = timeout; }

    /// "127.0.0.1:31416", as the error messages name it.
    const std::string& endpoint() const { return m_endpoint; }
    /// Connected and signed in.
    bool connected() const { return m_state == State::Ready; }
    /// Calls whose callback has not run yet.
    std::size_t pendingCalls() const { return m_queue.size() + m_rejected.size(); }

private:
    enum class State { Idle, Connecting, AwaitingNonce, AwaitingAuthorization, Ready };
    struct PendingCall {
        std::string body;
        std::string name; // for messages: "get_cc_status"
        Callback done;
    };

    GuiRpcClient(sd_event* event, std::string endpoint, const sockaddr_storage& address,
                 socklen_t addressLength, std::string password);
    Result<void> start();

    /// The error handler of the loop's sources: an exception from a handler fails the calls, unless the
    /// handler destroyed the client.
    libsystemd::ErrorHandler errorHandler();
    void handleIo(std::uint32_t revents);
    void handleKick();
    void handleTimeout();
    /// An exception escaped a callback (of the client's own or a caller's): the connection ends with an
    /// error. Called only while the client exists.
    void failFromException(const char* what) noexcept;

    void connect();
    void finishConnect(int error);
    void startAuthentication();
    void send(std::string_view body);
    void flush();
    void readAvailable();
    void handleReply(std::string reply);
    void closeQuietly();
    void closeSocket();
    void updateEvents();
    void armTimer() { m_timer.armIn(m_timeout); }

    /// Closes the connection and hands @p error to every pending call, in order.
    void fail(const Error& error);
    /// "BOINC's GUI RPC at <endpoint> <what>".
    Error failure(const std::string& what) const;
    std::string currentStep() const;

    libsystemd::EventPtr m_event;
    std::string m_endpoint;
    sockaddr_storage m_address{};
    socklen_t m_addressLength = 0;
    std::string m_password;
    std::chrono::milliseconds m_timeout = std::chrono::seconds(10);
    // Shared with every callback frame: set false by the destructor, so that a frame whose callback
    // destroyed the client stops touching it.
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);

    State m_state = State::Idle;
    UniqueFd m_fd;
    libsystemd::IoSource m_io;
    std::uint32_t m_ioEvents = 0;
    libsystemd::Timer m_timer;
    libsystemd::Defer m_kick; // starts the next step from the loop: connecting, or sending the next call
    ReplyBuffer m_replies;
    std::string m_out;
    std::size_t m_outOffset = 0;

    std::deque<PendingCall> m_queue;
    std::deque<PendingCall> m_rejected; // too large to send: failed from the loop
    bool m_inFlight = false;            // the front of m_queue has been sent and waits for its reply
};

} // namespace nicer::boinc
