#include "workhost/WorkHostMessage.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace nicer::workhost {

std::string encodeMessage(const Message& message) {
    std::string packet(verbKeyword(message.verb));
    for (const auto& field : message.fields) {
        packet.push_back('\0');
        packet += field;
    }
    return packet;
}

Result<Message> decodeMessage(std::string_view packet) {
    if (packet.empty()) {
        return Error{"an empty message from the work host's link"};
    }
    const auto verbEnd = packet.find('\0');
    const auto keyword = packet.substr(0, verbEnd);
    const auto verb = valueIn<Verb>(kVerbKeywords, keyword);
    if (!verb) {
        return Error{
            "an unknown message '" + std::string(keyword) +
            "' on the work host's link: nicerd and nicer-work-host are of different versions; restart "
            "nicerd after an upgrade"};
    }
    Message message{*verb, {}};
    for (std::size_t start = verbEnd; start != std::string_view::npos;) {
        const auto end = packet.find('\0', start + 1);
        message.fields.emplace_back(
            packet.substr(start + 1, end == std::string_view::npos ? end : end - start - 1));
        start = end;
    }
    return message;
}

Message startMessage(const StartRequest& r) {
    Message m{
        Verb::Start,
        {r.name, std::to_string(r.nice), r.executable, r.workingDirectory, std::to_string(r.argv.size())}};
    m.fields.insert(m.fields.end(), r.argv.begin(), r.argv.end());
    m.fields.insert(m.fields.end(), r.environment.begin(), r.environment.end());
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

Result<StartRequest> parseStart(const Message& message) {
    const auto& m = message.fields;
    if (message.verb != Verb::Start || m.size() < 5) {
        return Error{"start: " + std::to_string(m.size() + 1) + " fields, at least 6 are needed"};
    }
    StartRequest r;
    r.name = m[0];
    auto nice = parseInt(m[1], "nice");
    auto argc = parseInt(m[4], "argc");
    if (!nice || !argc) {
        return !nice ? nice.error() : argc.error();
    }
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name.front() == '.') {
        return Error{"start: the instance name '" + r.name + "' cannot name a cgroup"};
    }
    if (*argc < 1 || static_cast<std::size_t>(*argc) > m.size() - 5) {
        return Error{"start: argc " + m[4] + " does not fit the " + std::to_string(m.size() - 5) +
                     " fields that follow"};
    }
    r.nice = *nice;
    r.executable = m[2];
    r.workingDirectory = m[3];
    r.argv.assign(m.begin() + 5, m.begin() + 5 + *argc);
    r.environment.assign(m.begin() + 5 + *argc, m.end());
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
        return Error{"a '" + std::string(verbKeyword(message.verb)) + "' message of " +
                     std::to_string(packet.size()) + " bytes is over the link's limit of " +
                     std::to_string(kMaxMessageBytes)};
    }
    while (::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) {
            return Error{"cannot send '" + std::string(verbKeyword(message.verb)) +
                         "' to the work host's link: " + std::strerror(errno)};
        }
    }
    return {};
}

Result<std::optional<Message>> receiveMessage(int fd) {
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
        return std::optional<Message>();
    }
    if ((header.msg_flags & MSG_TRUNC) != 0 || static_cast<std::size_t>(n) > kMaxMessageBytes) {
        return Error{"the work host's link carried a message over its limit of " +
                     std::to_string(kMaxMessageBytes) + " bytes; it is not read in part"};
    }
    packet.resize(static_cast<std::size_t>(n));
    auto message = decodeMessage(packet);
    if (!message) {
        return message.error();
    }
    return std::optional<Message>(std::move(*message));
}

} // namespace nicer::workhost
