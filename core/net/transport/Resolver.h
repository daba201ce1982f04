#pragma once

#include "libsystemd/IoSource.h"
#include "net/transport/SocketAddress.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nicer::net {

/// Resolves a host name to its IPv4 and IPv6 addresses without blocking the event loop.
///
/// getaddrinfo() runs on a helper thread and the answer comes back through an eventfd watched by the loop.
/// (libsystemd's sd-resolve does the same but is not public API: Debian ships no sd-resolve.h.)
class Resolver {
public:
    /// Called once on the loop with the addresses in getaddrinfo()'s order (never empty), or why there are
    /// none. It may destroy the Resolver.
    using Callback = std::function<void(Result<std::vector<SocketAddress>>)>;

    /// Starts resolving @p host for TCP port @p port. @p done runs on @p event's loop, unless the Resolver
    /// is destroyed first: then the lookup finishes unseen on its thread (a slow DNS server cannot stall the
    /// loop, not even when the caller gives up on it).
    static Result<std::unique_ptr<Resolver>> start(sd_event* event, std::string host, std::uint16_t port,
                                                   Callback done);

    ~Resolver();
    Resolver(const Resolver&) = delete;
    Resolver& operator=(const Resolver&) = delete;

    /// Called with what() when the callback throws (after it may have destroyed the Resolver); without one
    /// the exception is dropped, and the caller's own timeout reports the unanswered lookup.
    void setErrorHandler(libsystemd::ErrorHandler handler);

private:
    struct Job;

    Resolver(std::shared_ptr<Job> job, Callback done);
    void onAnswer();

    std::shared_ptr<Job> m_job;
    Callback m_done;
    libsystemd::IoSource m_source;
};

} // namespace nicer::net
