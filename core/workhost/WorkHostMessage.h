#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace nicer::workhost {

/**
 * What nicerd and its work host (nicer-work-host, in nicer-work@USER.service) say to each other over one
 * SOCK_SEQPACKET socket: each packet is one message, its fields joined by NUL bytes, the first naming it.
 *
 * nicerd listens; the host connects once it has set up its cgroups. The connection is also the liveness
 * link: when nicerd dies (even by kill -9) the kernel closes its end, and the host stops the work and exits.
 *
 *   host -> nicerd   hello  WORK_CGROUP                   the leaf the work runs in, from the cgroup root
 *                    refused REASON                       the host cannot run the work here (and exits)
 *                    started NAME PID | failed NAME WHY   the answer to start
 *                    exited NAME HOW                      an instance ended (its whole leaf is empty again)
 *   nicerd -> host   start NAME NICE EXE CWD ARGC ARGV... ENV...
 *                    stop NAME                            SIGTERM, then SIGKILL after the host's grace
 */
using Message = std::vector<std::string>;

inline constexpr std::size_t kMaxMessageBytes = 256 * 1024;

std::string encodeMessage(const Message& message);
/// Fails on an empty packet (a message has at least its name).
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

/// Where nicerd listens for the host of user @p uid: in the user's runtime directory, which only the user
/// can enter. The host cannot read nicerd's environment, so both use logind's path for it.
std::filesystem::path workHostSocket(uid_t uid);

/// The system unit that hosts @p user's work, e.g. "nicer-work@alice.service"; empty when the name cannot be
/// a unit's instance as it is (the polkit rule compares it with the caller's user name, unescaped).
std::string workUnitFor(std::string_view user);

/// Sends one message on a SOCK_SEQPACKET socket.
Result<void> sendMessage(int fd, const Message& message);
/// Receives one message; an empty Message means the peer closed the connection.
Result<Message> receiveMessage(int fd);

} // namespace nicer::workhost
