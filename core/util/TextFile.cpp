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

} // namespace nicer
