#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace nicer::net {

/// Bytes waiting in the kernel's queues of TCP sockets: received but not yet read by the program (the
/// receive queue), and written by the program but not yet acknowledged by the peer (the send queue).
struct SocketQueues {
    std::uint64_t unread = 0;
    std::uint64_t unsent = 0;

    bool operator==(const SocketQueues&) const = default;
};

/// Parses the text of /proc/net/tcp or /proc/net/tcp6: the queues of each socket by its inode. Listening
/// sockets are left out (their "receive queue" is the accept backlog). Errors name @p source and the line.
Result<std::map<std::uint64_t, SocketQueues>> parseProcNetTcp(std::string_view text, std::string_view source);

/// The inodes of the sockets process @p pid holds open (its /proc/PID/fd links "socket:[INODE]"); none when
/// the process is gone or its descriptors cannot be read.
std::vector<std::uint64_t> socketInodesOf(pid_t pid, const std::filesystem::path& proc = "/proc");

/**
 * The queues of the TCP sockets that the processes @p pids hold, added up. Each process's sockets are looked
 * up in the TCP tables of its own network namespace (/proc/PID/net/tcp and tcp6), so a program in another
 * namespace is measured where it lives. Processes without sockets cost one directory listing.
 *
 * A program that limits its own reading (BOINC's libcurl) lets the kernel fill the receive buffer at the
 * link's speed: those bytes crossed the link as its traffic, though the program has not counted them yet.
 */
Result<SocketQueues> tcpQueuesOf(const std::vector<pid_t>& pids, const std::filesystem::path& proc = "/proc");

} // namespace nicer::net
