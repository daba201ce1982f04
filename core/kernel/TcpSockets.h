#pragma once

#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <sys/types.h>
#include <vector>

namespace nicer::kernel {

/// The kernel's view of one TCP socket (sock_diag, as `ss -ti` shows it).
struct TcpSocketInfo {
    std::uint64_t inode = 0;
    std::uint64_t bytesReceived = 0; ///< payload bytes that crossed the link to it (tcpi_bytes_received)
    std::uint64_t bytesAcked = 0;    ///< payload bytes it sent that the peer acknowledged
    std::uint32_t unread = 0;        ///< received, not yet read by the program
    std::uint32_t unsent = 0;        ///< written by the program, not yet acknowledged
    std::chrono::microseconds receiveRtt{0}; ///< the receiver's RTT estimate (tcpi_rcv_rtt); 0 when unknown
    std::chrono::microseconds rtt{0};        ///< the sender's smoothed RTT (tcpi_rtt); 0 when unknown
};

/**
 * Every TCP socket (IPv4 and IPv6, listeners left out) of the network namespace nicerd runs in, read
 * through a NETLINK_SOCK_DIAG socket. Needs no privilege: like `ss`, any user sees every socket's counters.
 */
Result<std::vector<TcpSocketInfo>> readTcpSockets();

/// The inodes of the sockets process @p pid holds open (its /proc/PID/fd links "socket:[INODE]"); none when
/// the process is gone or its descriptors cannot be read.
std::vector<std::uint64_t> socketInodesOf(pid_t pid, const std::filesystem::path& proc = "/proc");

/**
 * The TCP sockets the processes @p pids hold, in nicerd's network namespace. A program that limits its own
 * reading (BOINC's libcurl) lets the kernel fill the receive buffer at the link's speed: those bytes crossed
 * the link as its traffic though the program has not counted them yet, and bytesReceived counts them.
 */
Result<std::vector<TcpSocketInfo>> tcpSocketsOf(const std::vector<pid_t>& pids,
                                                const std::filesystem::path& proc = "/proc");

} // namespace nicer::kernel
