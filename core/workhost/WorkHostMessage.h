#pragma once

#include "util/Keywords.h"
#include "util/Result.h"

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace nicer::workhost {

/**
 * What nicerd and its work host (nicer-work-host, in nicer-work@UID.service) say to each other over one
 * SOCK_SEQPACKET socket: each packet is one message, its fields joined by NUL bytes, the first naming it.
 *
 * systemd listens (nicer-work@UID.socket, the user's alone) and starts the host when nicerd connects; the
 * host accepts the connection, sets up its cgroups and greets. The connection is also the liveness link: when
 * nicerd dies (even by kill -9) the kernel closes its end, and the host stops the work and exits. A second
 * connection while one is served is answered "refused" and closed.
 *
 *   host -> nicerd   hello  WORK_CGROUP                   the leaf the work runs in, from the cgroup root
 *                    refused REASON                       the host cannot run the work here (and exits)
 *                    started NAME PID | failed NAME WHY   the answer to start
 *                    exited NAME HOW                      an instance ended (its whole leaf is empty again)
 *   nicerd -> host   start NAME NICE EXE CWD ARGC ARGV... ENV...
 *                    stop NAME                            SIGTERM, then SIGKILL after the host's grace
 */
enum class Verb { Hello, Refused, Started, Failed, Exited, Start, Stop };

/// The verbs' keywords on the link, in Verb's order: the only place they are spelt.
inline constexpr std::array<std::string_view, 7> kVerbKeywords{"hello",  "refused", "started", "failed",
                                                               "exited", "start",   "stop"};

inline std::string_view verbKeyword(Verb verb) {
    return keywordIn(kVerbKeywords, verb);
}

/// One message: its verb and the fields after it.
struct Message {
    Verb verb = Verb::Hello;
    std::vector<std::string> fields;

    bool operator==(const Message&) const = default;
    /// Whether it has exactly @p count fields (a message of the wrong shape is the peer's fault).
    bool has(std::size_t count) const { return fields.size() == count; }
};

/// The largest message either side sends. A SOCK_SEQPACKET packet must fit the sender's socket buffer whole
/// (net.core.wmem_default, 208 KiB on Linux; an unprivileged process cannot raise it past wmem_max), so the
/// limit stays well under it: a larger message is refused before it is sent, and the link stays up.
inline constexpr std::size_t kMaxMessageBytes = 128 * 1024;

std::string encodeMessage(const Message& message);
/// Fails on an empty packet (a message has at least its verb) and on a verb this side does not know (a host
/// and a nicerd of different versions).
Result<Message> decodeMessage(std::string_view packet);

/// The start of one instance: what the host needs to run it as systemd would run a transient service.
struct StartRequest {
    std::string name;
    int nice = 19;
    std::string executable;
    std::string workingDirectory;
    std::vector<std::string> argv; ///< argv[0] included
    std::vector<std::string> environment;
};
Message startMessage(const StartRequest& request);
/// The inverse of startMessage(); the error says which field is wrong.
Result<StartRequest> parseStart(const Message& message);

/// Where nicerd reaches the host of user @p uid: the socket of nicer-work@UID.socket, which systemd creates
/// for that user alone (owner @p uid, mode 0600) in a directory only root can write.
std::filesystem::path workHostSocket(uid_t uid);

/// The system unit that hosts the work of user @p uid, e.g. "nicer-work@1000.service".
std::string workUnitFor(uid_t uid);

/// Sends one message on a SOCK_SEQPACKET socket; one over kMaxMessageBytes is refused before anything is
/// sent, so the link stays usable.
Result<void> sendMessage(int fd, const Message& message);
/// Receives one message; nullopt means the peer closed the connection. A packet longer than
/// kMaxMessageBytes (which the kernel would cut) is an error, never a shortened message.
Result<std::optional<Message>> receiveMessage(int fd);

} // namespace nicer::workhost
