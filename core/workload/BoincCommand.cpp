#include "workload/BoincCommand.h"

#include "util/UniqueFd.h"

#include <arpa/inet.h>
#include <charconv>
#include <netinet/in.h>
#include <sys/socket.h>

namespace nicer::workload {

namespace {

/// True for "--NAME" and "-NAME": BOINC's command line takes both (client/cs_cmdline.cpp).
bool isOption(std::string_view arg, std::string_view name) {
    if (arg.starts_with("--")) {
        arg.remove_prefix(2);
    } else if (arg.starts_with("-")) {
        arg.remove_prefix(1);
    } else {
        return false;
    }
    return arg == name;
}

/// Binds 127.0.0.1:@p port (0: any); returns the port bound, or 0 when it is taken.
int bindLoopback(int port) {
    const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) {
        return 0;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        return 0;
    }
    socklen_t length = sizeof addr;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
        return 0;
    }
    return ntohs(addr.sin_port);
}

} // namespace

Result<std::optional<BoincClientCommand>> boincClientOf(const std::vector<std::string>& argv) {
    std::size_t client = 0;
    while (client < argv.size() && std::filesystem::path(argv[client]).filename() != "boinc") {
        ++client;
    }
    if (client == argv.size()) {
        return std::optional<BoincClientCommand>{};
    }
    BoincClientCommand command;
    for (std::size_t i = client + 1; i < argv.size(); ++i) {
        const bool hasValue = i + 1 < argv.size();
        if (isOption(argv[i], "dir") && hasValue) {
            command.dir = argv[++i];
        } else if (isOption(argv[i], "gui_rpc_port") && hasValue) {
            const std::string& value = argv[++i];
            int port = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
            if (ec != std::errc() || end != value.data() + value.size() || port < 1 || port > 65535) {
                return Error{"the BOINC client's --gui_rpc_port '" + value + "' is not a port (1..65535)"};
            }
            command.rpcPort = port;
        }
    }
    if (command.dir.empty()) {
        return Error{
            "the workload runs the BOINC client without --dir: give it `--dir DIR` so that nicer can "
            "find its GUI RPC password (DIR/gui_rpc_auth.cfg) and govern it"};
    }
    return std::optional<BoincClientCommand>{std::move(command)};
}

int chooseBoincRpcPort(int preferred) {
    if (bindLoopback(preferred) == preferred) {
        return preferred;
    }
    const int any = bindLoopback(0);
    return any != 0 ? any : preferred;
}

} // namespace nicer::workload
