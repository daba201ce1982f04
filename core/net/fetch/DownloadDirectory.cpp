#include "net/fetch/DownloadDirectory.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>

namespace nicer::net {

Result<UniqueFd> lockDownloadDirectory(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Error{"cannot create the download directory " + dir.string() + ": " + ec.message()};
    }
    UniqueFd lock(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!lock) {
        return Error{"cannot open the download directory " + dir.string() + ": " + std::strerror(errno)};
    }
    if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            return Error{"another nicer fetch is already downloading into " + dir.string() +
                         "; wait for it to finish or choose another --dir"};
        }
        return Error{"cannot lock the download directory " + dir.string() + ": " + std::strerror(errno)};
    }
    return lock;
}

} // namespace nicer::net
