#include "net/transport/SocketBio.h"

#include "net/transport/Socket.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace nicer::net {

namespace {

Socket& socketOf(BIO* bio) {
    return *static_cast<Socket*>(BIO_get_data(bio));
}

bool retryLater(int error) {
    return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

int bioWrite(BIO* bio, const char* data, int length) {
    BIO_clear_retry_flags(bio);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
    const ssize_t n = socketOf(bio).send({bytes, static_cast<std::size_t>(length)});
    if (n < 0 && retryLater(errno)) {
        BIO_set_retry_write(bio);
    }
    return static_cast<int>(n);
}

int bioRead(BIO* bio, char* data, int length) {
    BIO_clear_retry_flags(bio);
    auto* bytes = reinterpret_cast<std::uint8_t*>(data);
    const ssize_t n = socketOf(bio).receive({bytes, static_cast<std::size_t>(length)});
    if (n < 0 && retryLater(errno)) {
        BIO_set_retry_read(bio);
    } else if (n == 0) {
        // OpenSSL asks BIO_eof() to tell a closed connection from a read that merely returned nothing.
        BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
    }
    return static_cast<int>(n);
}

long bioCtrl(BIO* bio, int command, long, void*) {
    switch (command) {
    case BIO_CTRL_FLUSH: // send() hands everything to the kernel: nothing to flush
        return 1;
    case BIO_CTRL_EOF:
        return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
    default:
        return 0;
    }
}

int bioCreate(BIO* bio) {
    BIO_set_init(bio, 1);
    return 1;
}

struct BioMethodDeleter {
    void operator()(BIO_METHOD* method) const noexcept { BIO_meth_free(method); }
};

const BIO_METHOD* socketBioMethod() {
    // Built once per process (thread-safe static initialisation) and shared by every connection.
    static const std::unique_ptr<BIO_METHOD, BioMethodDeleter> method = [] {
        const int index = BIO_get_new_index();
        BIO_METHOD* m = index < 0 ? nullptr : BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "nicer socket");
        if (m) {
            BIO_meth_set_write(m, &bioWrite);
            BIO_meth_set_read(m, &bioRead);
            BIO_meth_set_ctrl(m, &bioCtrl);
            BIO_meth_set_create(m, &bioCreate);
        }
        return std::unique_ptr<BIO_METHOD, BioMethodDeleter>(m);
    }();
    return method.get();
}

} // namespace

BIO* newSocketBio(Socket& socket) {
    const BIO_METHOD* method = socketBioMethod();
    BIO* bio = method ? BIO_new(method) : nullptr;
    if (bio) {
        BIO_set_data(bio, &socket);
    }
    return bio;
}

} // namespace nicer::net
