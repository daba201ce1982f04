#include "net/rate/SocketQueues.h"

#include "util/TextFile.h"

#include <charconv>
#include <set>
#include <string>

namespace nicer::net {

namespace {

/// The whitespace-separated fields of @p line.
std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
            ++i;
        }
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
            ++i;
        }
        if (i > start) {
            out.push_back(line.substr(start, i - start));
        }
    }
    return out;
}

bool parseNumber(std::string_view text, int base, std::uint64_t& out) {
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
    return ec == std::errc() && ptr == end && !text.empty();
}

constexpr std::string_view kListen = "0A"; // TCP_LISTEN, as the kernel prints the state

} // namespace

Result<std::map<std::uint64_t, SocketQueues>> parseProcNetTcp(std::string_view text,
                                                              std::string_view source) {
    std::map<std::uint64_t, SocketQueues> sockets;
    std::size_t lineNumber = 0;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        const auto line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        ++lineNumber;
        if (lineNumber == 1) {
            continue; // the header
        }
        const auto f = fields(line);
        if (f.empty()) {
            continue;
        }
        // sl local rem st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
        const auto bad = [&](const std::string& what) {
            return Error{std::string(source) + " line " + std::to_string(lineNumber) + ": " + what + " in '" +
                         std::string(line) + "'"};
        };
        if (f.size() < 10) {
            return bad("expected at least 10 fields");
        }
        const auto queues = f[4];
        const auto colon = queues.find(':');
        std::uint64_t tx = 0;
        std::uint64_t rx = 0;
        std::uint64_t inode = 0;
        if (colon == std::string_view::npos || !parseNumber(queues.substr(0, colon), 16, tx) ||
            !parseNumber(queues.substr(colon + 1), 16, rx)) {
            return bad("the queues are not two hexadecimal numbers");
        }
        if (!parseNumber(f[9], 10, inode)) {
            return bad("the inode is not a number");
        }
        if (f[3] == kListen || inode == 0) {
            continue; // a listener's rx_queue is its backlog; inode 0 is a socket no process holds any more
        }
        sockets[inode] = SocketQueues{rx, tx};
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
        std::uint64_t inode = 0;
        if (parseNumber(std::string_view(target).substr(prefix.size(), target.size() - prefix.size() - 1), 10,
                        inode)) {
            inodes.push_back(inode);
        }
    }
    return inodes;
}

Result<SocketQueues> tcpQueuesOf(const std::vector<pid_t>& pids, const std::filesystem::path& proc) {
    SocketQueues total;
    std::set<std::uint64_t> counted; // a socket shared by several processes counts once
    for (const pid_t pid : pids) {
        const auto inodes = socketInodesOf(pid, proc);
        if (inodes.empty()) {
            continue;
        }
        std::map<std::uint64_t, SocketQueues> table;
        for (const char* file : {"tcp", "tcp6"}) {
            const auto path = proc / std::to_string(pid) / "net" / file;
            auto text = readTextFile(path);
            if (!text) {
                continue; // the process ended, or IPv6 is off
            }
            auto parsed = parseProcNetTcp(*text, path.string());
            if (!parsed) {
                return parsed.error();
            }
            table.merge(*parsed);
        }
        for (const auto inode : inodes) {
            const auto found = table.find(inode);
            if (found != table.end() && counted.insert(inode).second) {
                total.unread += found->second.unread;
                total.unsent += found->second.unsent;
            }
        }
    }
    return total;
}

} // namespace nicer::net
