#include "util/TextFile.h"

#include "util/UniqueFd.h"

#include <cerrno>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace nicer {

Result<std::string> readTextFile(const std::filesystem::path& path) {
    const auto failure = [&](const char* what) {
        return Error{std::string(what) + " " + path.string() + ": " + std::generic_category().message(errno)};
    };
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return failure("cannot open");
    }
    std::string text;
    char buffer[4096];
    // The files read here are small; the bound only guards against reading something that is not one.
    while (text.size() < (1u << 24)) {
        const auto n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return failure("cannot read");
        }
        if (n == 0) {
            break;
        }
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

Result<void> writeFileAtomically(const std::filesystem::path& path, const std::string& text, mode_t mode) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const auto tmp = path.string() + ".tmp";
    const auto failure = [&](const std::string& what, int error) {
        ::unlink(tmp.c_str());
        return Error{what + ": " + std::generic_category().message(error)};
    };
    {
        const UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
        if (!fd) {
            return Error{"cannot write " + tmp + ": " + std::generic_category().message(errno)};
        }
        std::size_t written = 0;
        while (written < text.size()) {
            const auto n = ::write(fd.get(), text.data() + written, text.size() - written);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                return failure("cannot write " + tmp, errno);
            }
            written += static_cast<std::size_t>(n);
        }
        if (::fsync(fd.get()) != 0) {
            return failure("cannot write " + tmp, errno);
        }
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return failure("cannot replace " + path.string(), errno);
    }
    return {};
}

} // namespace nicer
