// nicer-work-host: the process of nicer-work@USER.service, the system unit that runs a user's volunteer work
// in the root idle slice. It runs as the user, lays out the cgroup systemd delegated to it, connects to the
// user's nicerd and runs the work's instances as nicerd asks, until nicerd is gone (WorkHost.h).
#include "kernel/CgroupLayout.h"
#include "util/TextFile.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHost.h"
#include "workhost/WorkHostMessage.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace {

using namespace nicer;

/// This process's cgroup on the v2 tree ("0::/PATH" in /proc/self/cgroup).
Result<std::string> ownCgroup() {
    auto text = readTextFile("/proc/self/cgroup");
    if (!text) {
        return text.error();
    }
    const auto at = text->find("0::");
    if (at == std::string::npos || (at != 0 && (*text)[at - 1] != '\n')) {
        return Error{"this process is on no cgroup v2 tree (/proc/self/cgroup has no 0:: line)"};
    }
    const auto end = text->find('\n', at);
    return text->substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
}

/// Connects to nicerd's socket; nicerd listens before it starts this unit, but gets a few seconds anyway.
Result<UniqueFd> connectToNicerd() {
    const auto path = workhost::workHostSocket(::getuid());
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    int error = 0;
    for (int attempt = 0; attempt < 50; ++attempt) {
        UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        if (fd && ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
            ucred peer{};
            socklen_t length = sizeof peer;
            if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
                peer.uid != ::getuid()) {
                return Error{"the process listening on " + path.string() + " is not this user's"};
            }
            return fd;
        }
        error = errno;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Error{"cannot reach nicerd at " + path.string() + ": " + std::strerror(error) +
                 " (this unit is started by nicerd, not by hand)"};
}

int run(int argc, char** argv) {
    CLI::App app{"Runs one user's volunteer work in the machine's root idle slice (nicer.slice) for that "
                 "user's nicerd. Started by nicerd through the system manager as nicer-work@USER.service; it "
                 "takes no options and stops the work as soon as nicerd is gone.",
                 "nicer-work-host"};
    app.set_version_flag("--version", std::string(NICER_VERSION));
    CLI11_PARSE(app, argc, argv);

    // Signals are read from a signalfd, never delivered: the work's children get an empty mask again.
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGCHLD}) {
        sigaddset(&signals, s);
    }
    ::sigprocmask(SIG_BLOCK, &signals, nullptr);
    const UniqueFd signalFd(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));

    auto link = connectToNicerd();
    if (!link) {
        std::cerr << "nicer-work-host: " << link.error().message << '\n';
        return 1;
    }
    auto cgroup = ownCgroup();
    auto layout = kernel::CgroupLayout::detect();
    auto host = !cgroup   ? Result<workhost::WorkHost>(cgroup.error())
                : !layout ? Result<workhost::WorkHost>(layout.error())
                          : workhost::WorkHost::prepare(std::move(*layout), *cgroup);
    if (!host) {
        std::cerr << "nicer-work-host: " << host.error().message << '\n';
        (void)workhost::sendMessage(link->get(), {"refused", host.error().message});
        return 1;
    }
    const std::string work = *cgroup + "/work";
    if (auto greeted = workhost::sendMessage(link->get(), {"hello", work}); !greeted) {
        std::cerr << "nicer-work-host: " << greeted.error().message << '\n';
        return 1;
    }
    std::cerr << "nicer-work-host: running the work in " << work << " for nicerd\n";
    auto served = host->serve(link->get(), signalFd.get());
    if (!served) {
        std::cerr << "nicer-work-host: " << served.error().message << "; the work was stopped\n";
        return 1;
    }
    std::cerr << "nicer-work-host: nicerd is gone or the unit was stopped; the work was stopped\n";
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    // What escapes (out of memory, a bug) ends the host with a message; the unit's end kills the work.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "nicer-work-host: internal error: " << e.what() << '\n';
    } catch (...) {
        std::cerr << "nicer-work-host: internal error\n";
    }
    return 1;
}
