// nicer-work-host: the process of nicer-work@UID.service, the system unit that runs a user's volunteer work
// in the root idle slice. It runs as the user, accepts the user's nicerd on the socket systemd passed, lays
// out the cgroup systemd delegated to it and runs the work's instances as nicerd asks, until nicerd is gone
// (WorkHost.h).
#include "kernel/CgroupLayout.h"
#include "util/Log.h"
#include "util/TextFile.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHost.h"
#include "workhost/WorkHostMessage.h"

#include <CLI/CLI.hpp>
#include <systemd/sd-daemon.h>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
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

/// The connection of this user's nicerd, on the socket systemd passed (nicer-work@UID.socket). A connection
/// of another user (root's, say: only root can reach a socket of mode 0600 but its owner) is closed
/// unanswered.
Result<UniqueFd> acceptNicerd(int listener) {
    while (true) {
        UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
        if (!fd) {
            if (errno == EINTR || errno == ECONNABORTED) {
                continue;
            }
            return Error{std::string("cannot accept nicerd's connection: ") + std::strerror(errno)};
        }
        ucred peer{};
        socklen_t length = sizeof peer;
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.uid == ::getuid()) {
            return fd;
        }
        log::warning() << "nicer-work-host: a connection of uid " << peer.uid
                       << " (not this user's) was closed";
    }
}

int run(int argc, char** argv) {
    CLI::App app{"Runs one user's volunteer work in the machine's root idle slice (nicer.slice) for that "
                 "user's nicerd. Started by systemd as nicer-work@UID.service when nicerd connects to "
                 "nicer-work@UID.socket; it takes no options and stops the work as soon as nicerd is gone.",
                 "nicer-work-host"};
    app.set_version_flag("--version", std::string(NICER_VERSION));
    CLI11_PARSE(app, argc, argv);

    const UniqueFd signalFd = workhost::WorkHost::blockSignals();

    if (::sd_listen_fds(1) != 1) {
        log::error() << "nicer-work-host: systemd passed no socket: this program is started by "
                        "nicer-work@UID.socket when nicerd connects, not by hand";
        return 1;
    }
    const int listener = SD_LISTEN_FDS_START;
    auto link = acceptNicerd(listener);
    if (!link) {
        log::error() << "nicer-work-host: " << link.error().message;
        return 1;
    }
    auto cgroup = ownCgroup();
    auto layout = kernel::CgroupLayout::detect();
    auto host =
        ::getuid() == 0
            ? Result<workhost::WorkHost>(Error{"the volunteer work never runs as root in the idle slice"})
        : !cgroup ? Result<workhost::WorkHost>(cgroup.error())
        : !layout ? Result<workhost::WorkHost>(layout.error())
                  : workhost::WorkHost::prepare(std::move(*layout), *cgroup);
    if (!host) {
        log::error() << "nicer-work-host: " << host.error().message;
        (void)workhost::sendMessage(link->get(), {workhost::Verb::Refused, {host.error().message}});
        return 1;
    }
    const std::string& work = host->workCgroup();
    if (auto greeted = workhost::sendMessage(link->get(), {workhost::Verb::Hello, {work}}); !greeted) {
        log::error() << "nicer-work-host: " << greeted.error().message;
        return 1;
    }
    log::info() << "nicer-work-host: running the work in " << work << " for nicerd";
    auto served = host->serve(link->get(), listener, signalFd.get());
    if (!served) {
        log::error() << "nicer-work-host: " << served.error().message << "; the work was stopped";
        return 1;
    }
    log::info() << "nicer-work-host: nicerd is gone or the unit was stopped; the work was stopped";
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    // What escapes (out of memory, a bug) ends the host with a message; the unit's end kills the work.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        log::error() << "nicer-work-host: internal error: " << e.what();
    } catch (...) {
        log::error() << "nicer-work-host: internal error";
    }
    return 1;
}
