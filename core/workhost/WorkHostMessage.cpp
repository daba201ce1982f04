#include "workhost/WorkHostMessage.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace nicer::workhost {

std::string encodeMessage(const Message& message) {
    std::string packet;
    for (std::size_t i = 0; i < message.size(); ++i) {
        if (i > 0) {
            packet.push_back('\0');
        }
        packet += message[i];
    }
    return packet;
}

Result<Message> decodeMessage(std::string_view packet) {
    if (packet.empty()) {
        return Error{"an empty message from the work host's link"};
    }
    Message message;
    std::size_t start = 0;
    while (true) {
        const auto end = packet.find('\0', start);
        message.emplace_back(packet.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) {
            return message;
        }
        start = end + 1;
    }
}

Message startMessage(const StartRequest& r) {
    Message m{"start",
              r.name,
              std::to_string(r.nice),
              r.executable,
              r.workingDirectory,
              std::to_string(r.argv.size())};
    m.insert(m.end(), r.argv.begin(), r.argv.end());
    m.insert(m.end(), r.environment.begin(), r.environment.end());
    return m;
}

namespace {
Result<int> parseInt(const std::string& text, const char* what) {
    int value = 0;
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) {
        return Error{std::string("start: ") + what + " '" + text + "' is not a whole number"};
    }
    return value;
}
} // namespace

Result<StartRequest> parseStart(const Message& m) {
    if (m.size() < 6 || m[0] != "start") {
        return Error{"start: " + std::to_string(m.size()) + " fields, at least 6 are needed"};
    }
    StartRequest r;
    r.name = m[1];
    auto nice = parseInt(m[2], "nice");
    auto argc = parseInt(m[5], "argc");
    if (!nice || !argc) {
        return !nice ? nice.error() : argc.error();
    }
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name.front() == '.') {
        return Error{"start: the instance name '" + r.name + "' cannot name a cgroup"};
    }
    if (*argc < 1 || static_cast<std::size_t>(*argc) > m.size() - 6) {
        return Error{"start: argc " + m[5] + " does not fit the " + std::to_string(m.size() - 6) +
                     " fields that follow"};
    }
    r.nice = *nice;
    r.executable = m[3];
    r.workingDirectory = m[4];
    r.argv.assign(m.begin() + 6, m.begin() + 6 + *argc);
    r.environment.assign(m.begin() + 6 + *argc, m.end());
    return r;
}

std::filesystem::path workHostSocket(uid_t uid) {
    return std::filesystem::path("/run/nicer/work") / (std::to_string(uid) + ".socket");
}

std::string workUnitFor(uid_t uid) {
    return "nicer-work@" + std::to_string(uid) + ".service";
}

Result<void> sendMessage(int fd, const Message& message) {
    const std::string packet = encodeMessage(message);
    if (packet.size() > kMaxMessageBytes) {
        return Error{"a '" + message.front() + "' message of " + std::to_string(packet.size()) +
                     " bytes is over the link's limit of " + std::to_string(kMaxMessageBytes)};
    }
    while (::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) {
            return Error{"cannot send '" + message.front() +
                         "' to the work host's link: " + std::strerror(errno)};
        }
    }
    return {};
}

Result<Message> receiveMessage(int fd) {
    // One byte more than the limit: a packet that fills it is over the limit, and MSG_TRUNC says so too.
    std::string packet(kMaxMessageBytes + 1, '\0');
    iovec data{packet.data(), packet.size()};
    msghdr header{};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    ssize_t n = 0;
    while ((n = ::recvmsg(fd, &header, MSG_CMSG_CLOEXEC)) < 0) {
        if (errno != EINTR) {
            return Error{std::string("cannot read the work host's link: ") + std::strerror(errno)};
        }
    }
    if (n == 0) {
        return Message{};
    }
    if ((header.msg_flags & MSG_TRUNC) != 0 || static_cast<std::size_t>(n) > kMaxMessageBytes) {
        return Error{"the work host's link carried a message over its limit of " +
                     std::to_string(kMaxMessageBytes) + " bytes; it is not read in part"};
    }
    packet.resize(static_cast<std::size_t>(n));
    return decodeMessage(packet);
}

} // namespace nicer::workhost
