#include "net/transport/Resolver.h"

#include "util/UniqueFd.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <thread>

namespace nicer::net {

// Shared by the loop and the lookup thread, so either may be the last to let go of it.
struct Resolver::Job {
    std::string host;
    std::uint16_t port = 0;
    UniqueFd done; // eventfd the thread signals when the answer is in

    std::mutex mutex;
    int status = 0; // getaddrinfo()'s return value
    int systemErrno = 0;
    std::vector<SocketAddress> addresses;
};

namespace {

struct AddrinfoDeleter {
    void operator()(addrinfo* list) const noexcept { ::freeaddrinfo(list); }
};

Error lookupError(const std::string& host, int status, int systemErrno) {
    const std::string what = "cannot resolve host name \"" + host + "\": ";
    switch (status) {
    case EAI_NONAME:
    case EAI_NODATA:
        return Error{what + "no such host; check the host name in the URL"};
    case EAI_AGAIN:
        return Error{what +
                     "temporary failure of name resolution; check the network and DNS, then try again"};
    case EAI_SYSTEM:
        return Error{what + std::strerror(systemErrno)};
    default:
        return Error{what + ::gai_strerror(status) + "; check the network and DNS"};
    }
}

} // namespace

Result<std::unique_ptr<Resolver>> Resolver::start(sd_event* event, std::string host, std::uint16_t port,
                                                  Callback done) {
    auto job = std::make_shared<Job>();
    job->host = std::move(host);
    job->port = port;
    job->done.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!job->done) {
        return Error{"cannot resolve host name \"" + job->host + "\": eventfd: " + std::strerror(errno)};
    }
    auto self = std::unique_ptr<Resolver>(new Resolver(job, std::move(done)));
    auto source = libsystemd::IoSource::create(event, job->done.get(), EPOLLIN,
                                               [raw = self.get()](std::uint32_t) { raw->onAnswer(); });
    if (!source) {
        return Error{"cannot resolve host name \"" + job->host + "\": " + source.error().message};
    }
    self->m_source = std::move(*source);
    try {
        std::thread([job] {
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            hints.ai_protocol = IPPROTO_TCP;
            hints.ai_flags = AI_NUMERICSERV;
            addrinfo* list = nullptr;
            const std::string service = std::to_string(job->port);
            const int status = ::getaddrinfo(job->host.c_str(), service.c_str(), &hints, &list);
            const int systemErrno = errno;
            const std::unique_ptr<addrinfo, AddrinfoDeleter> owned(list);
            {
                const std::lock_guard lock(job->mutex);
                job->status = status;
                job->systemErrno = systemErrno;
                for (const addrinfo* entry = list; status == 0 && entry; entry = entry->ai_next) {
                    if (auto address = SocketAddress::fromSockaddr(entry->ai_addr, entry->ai_addrlen)) {
                        job->addresses.push_back(*address);
                    }
                }
            }
            const std::uint64_t one = 1;
            [[maybe_unused]] const auto written = ::write(job->done.get(), &one, sizeof one);
        }).detach();
    } catch (const std::exception& e) {
        return Error{"cannot resolve host name \"" + job->host +
                     "\": cannot start a lookup thread: " + e.what()};
    }
    return self;
}

Resolver::Resolver(std::shared_ptr<Job> job, Callback done)
    : m_job(std::move(job))
    , m_done(std::move(done)) {}

Resolver::~Resolver() = default;

void Resolver::setErrorHandler(libsystemd::ErrorHandler handler) {
    m_source.setErrorHandler(std::move(handler));
}

void Resolver::onAnswer() {
    std::uint64_t count = 0;
    [[maybe_unused]] const auto read = ::read(m_job->done.get(), &count, sizeof count);
    // One answer only: the source must not fire again while the callback decides what to do.
    m_source.setEnabled(false);
    std::unique_lock lock(m_job->mutex);
    Result<std::vector<SocketAddress>> answer =
        m_job->status != 0
            ? Result<std::vector<SocketAddress>>(lookupError(m_job->host, m_job->status, m_job->systemErrno))
        : m_job->addresses.empty()
            ? Result<std::vector<SocketAddress>>(
                  Error{"cannot resolve host name \"" + m_job->host + "\": it has no IPv4 or IPv6 address"})
            : Result<std::vector<SocketAddress>>(std::move(m_job->addresses));
    lock.unlock();
    // Moved out first: the callback may destroy this Resolver, and with it m_done.
    auto done = std::move(m_done);
    done(std::move(answer));
}

} // namespace nicer::net
