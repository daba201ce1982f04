#pragma once

// The BOINC client's GUI RPC on the wire, with no I/O: how a request is framed, how replies are cut out of
// the byte stream, the password hash of the handshake, and the small replies every call shares (the nonce,
// authorized or not, success or BOINC's <error>). The replies that carry data are read in GuiRpcReplies.h.
//
// The protocol (BOINC 7.20's lib/gui_rpc_client.cpp and client/gui_rpc_server.cpp): the GUI sends
// "<boinc_gui_rpc_request>\n" BODY "</boinc_gui_rpc_request>\n\003"; the client answers
// "<boinc_gui_rpc_reply>\n" ... "</boinc_gui_rpc_reply>\n\003", one reply per request, in order. A
// connection authenticates once: <auth1/> gives a nonce, <auth2> sends md5(nonce + password) in hex.

#include "util/Result.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::boinc {

/// The largest reply a ReplyBuffer accepts by default. get_messages of a full event log (2000 lines) or
/// get_results of a large cache are well under 1 MiB; anything near this size is a broken stream.
inline constexpr std::size_t kMaxReplyBytes = 16 * 1024 * 1024;

/// The largest framed request the client reads (GUI_RPC_REQ_MSG_SIZE in client/gui_rpc_server.h); with a
/// larger one it closes the connection.
inline constexpr std::size_t kMaxRequestBytes = 100000;

/// The byte that ends every request and reply.
inline constexpr char kEndOfMessage = '\003';

/// @p body (e.g. "<get_cc_status/>\n") framed as one request, ready to send.
std::string frameRequest(std::string_view body);

/// The name of the request in @p body, for messages: "get_cc_status" for "<get_cc_status/>\n" or
/// "<get_notices>\n<seqno>3</seqno>\n</get_notices>\n"; "request" when there is no tag.
std::string requestName(std::string_view body);

/// @p value with &, <, >, " and ' written as entities, so that it can stand inside an element of a request
/// (URLs, names, passwords). The client reads them back (lib/parse.cpp, xml_unescape).
std::string xmlEscape(std::string_view value);

/// md5(@p nonce + @p password) as 32 lowercase hex digits: the <nonce_hash> of auth2. Fails only where
/// OpenSSL offers no MD5 (a FIPS-only configuration), and says so.
Result<std::string> authHash(std::string_view nonce, std::string_view password);

/**
 * Cuts the client's byte stream into replies. Bytes go in as they arrive; each complete reply (up to the
 * \003 that ends it, which is dropped) comes out once, in order. A reply that grows beyond the limit
 * without its \003 is an error: the stream is then no longer usable, and the caller closes it.
 */
class ReplyBuffer {
public:
    explicit ReplyBuffer(std::size_t limit = kMaxReplyBytes)
        : m_limit(limit) {}

    /// Adds @p bytes. Fails when the reply being received (complete or not) exceeds the limit; the buffer
    /// is then cleared.
    Result<void> append(std::string_view bytes);
    /// The oldest complete reply without its \003, removed from the buffer; nullopt while none is complete.
    std::optional<std::string> next();
    /// No byte is buffered: no reply is complete or under way.
    bool empty() const { return m_buffer.empty(); }
    /// Bytes of replies not yet taken by next(), complete or not.
    std::size_t size() const { return m_buffer.size(); }
    void clear();
    std::size_t limit() const { return m_limit; }

private:
    std::size_t m_limit;
    std::string m_buffer;
    std::size_t m_scanned = 0; // bytes of m_buffer already searched for \003
    std::size_t m_tail = 0;    // where the reply not yet complete starts: after the last \003 seen
};

/// The nonce from the reply to <auth1/>.
Result<std::string> parseNonce(std::string_view reply);

/// Whether the reply to <auth2> says <authorized/>: ok when it does; an error that says the password was
/// refused on <unauthorized/>, and another for anything else.
Result<void> parseAuthorized(std::string_view reply);

/// A reply that carries no data: ok on <success/>; an error with BOINC's own text on <error>, with the code
/// on <status>, and on <unauthorized/>. @p rpc names the request in the messages ("project_attach").
Result<void> parseSuccess(std::string_view reply, std::string_view rpc);

} // namespace nicer::boinc
