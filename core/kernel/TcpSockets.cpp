#include "kernel/TcpSockets.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <set>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace nicer::kernel {

namespace {

constexpr int kTcpListen = 10; // TCP_LISTEN in the kernel's state numbering

class Fd {
public:
    explicit Fd(int fd)
        : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

/// What follows a netlink message's header (NLMSG_DATA without its C cast).
const char* payloadOf(const nlmsghdr* header) {
    return reinterpret_cast<const char*>(header) + NLMSG_HDRLEN;
}

Error systemError(const std::string& what) {
    return Error{what + ": " + std::strerror(errno)};
}

/// One dump of @p family's TCP sockets, appended to @p out.
Result<void> dumpFamily(int fd, std::uint8_t family, std::vector<TcpSocketInfo>& out) {
    struct {
        nlmsghdr header;
        inet_diag_req_v2 request;
    } message{};
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    message.request.sdiag_family = family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~(1U << kTcpListen);
    message.request.idiag_ext = 1U << (INET_DIAG_INFO - 1);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd, &message, sizeof message, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
        return systemError("cannot ask the kernel for its TCP sockets (sock_diag)");
    }
    alignas(nlmsghdr) std::array<char, 32768> buffer{};
    for (;;) {
        const auto received = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (received < 0) {
            if (errno == EINTR) {
                continue;
            }
            return systemError("cannot read the kernel's TCP sockets (sock_diag)");
        }
        auto length = static_cast<unsigned>(received);
        for (auto* header = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(header, length);
             header = NLMSG_NEXT(header, length)) {
            if (header->nlmsg_type == NLMSG_DONE) {
                return {};
            }
            if (header->nlmsg_type == NLMSG_ERROR) {
                const auto* error = reinterpret_cast<const nlmsgerr*>(payloadOf(header));
                if (family == AF_INET6 && error->error == -EINVAL) {
                    return {}; // a kernel without IPv6
                }
                return Error{std::string("the kernel refused to list its TCP sockets (sock_diag): ") +
                             std::strerror(-error->error)};
            }
            const auto* socket = reinterpret_cast<const inet_diag_msg*>(payloadOf(header));
            TcpSocketInfo info;
            info.inode = socket->idiag_inode;
            info.unread = socket->idiag_rqueue;
            info.unsent = socket->idiag_wqueue;
            auto attributesLength = static_cast<int>(header->nlmsg_len - NLMSG_LENGTH(sizeof *socket));
            for (auto* attribute = reinterpret_cast<rtattr*>(const_cast<inet_diag_msg*>(socket) + 1);
                 RTA_OK(attribute, attributesLength); attribute = RTA_NEXT(attribute, attributesLength)) {
                if (attribute->rta_type != INET_DIAG_INFO) {
                    continue;
                }
                // An older kernel sends a shorter struct: the fields it lacks stay 0.
                tcp_info tcp{};
                std::memcpy(&tcp, RTA_DATA(attribute),
                            std::min<std::size_t>(RTA_PAYLOAD(attribute), sizeof tcp));
                info.bytesReceived = tcp.tcpi_bytes_received;
                info.bytesAcked = tcp.tcpi_bytes_acked;
                info.receiveRtt = std::chrono::microseconds(tcp.tcpi_rcv_rtt);
                info.rtt = std::chrono::microseconds(tcp.tcpi_rtt);
            }
            out.push_back(info);
        }
    }
}

} // namespace

Result<std::vector<TcpSocketInfo>> readTcpSockets() {
    const Fd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (fd.get() < 0) {
        return systemError("cannot open a sock_diag netlink socket");
    }
    std::vector<TcpSocketInfo> sockets;
    for (const std::uint8_t family : {AF_INET, AF_INET6}) {
        if (auto dumped = dumpFamily(fd.get(), family, sockets); !dumped) {
            return dumped.error();
        }
    }
    return sockets;
}

std::vector<std::uint64_t> socketInodesOf(pid_t pid, const std::filesystem::path& proc) {
    std::vector<std::uint64_t> inodes;
    std::error_code ec;
    const auto dir = proc / std::to_string(pid) / "fd";
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec)) {
        std::error_code linkError;
        const auto target = std::filesystem::read_symlink(it->path(), linkError).string();
        constexpr std::string_view prefix = "socket:[";
        if (linkError || !target.starts_with(prefix) || !target.ends_with(']')) {
            continue;
        }
        const std::string_view digits(target.data() + prefix.size(), target.size() - prefix.size() - 1);
        std::uint64_t inode = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), inode);
        if (error == std::errc() && end == digits.data() + digits.size()) {
            inodes.push_back(inode);
        }
    }
    return inodes;
}

Result<std::vector<TcpSocketInfo>> tcpSocketsOf(const std::vector<pid_t>& pids,
                                                const std::filesystem::path& proc) {
    std::set<std::uint64_t> wanted;
    for (const pid_t pid : pids) {
        for (const auto inode : socketInodesOf(pid, proc)) {
            wanted.insert(inode);
        }
    }
    if (wanted.empty()) {
        return std::vector<TcpSocketInfo>{};
    }
    auto all = readTcpSockets();
    if (!all) {
        return all.error();
    }
    std::vector<TcpSocketInfo> theirs;
    for (const auto& socket : *all) {
        if (wanted.contains(socket.inode)) {
            theirs.push_back(socket);
        }
    }
    return theirs;
}

} // namespace nicer::kernel
