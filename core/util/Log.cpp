#include "util/Log.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace nicer::log {

bool namesStream(const char* journalStream, int fd) {
    if (journalStream == nullptr) {
        return false;
    }
    const std::string_view text(journalStream);
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    unsigned long long device = 0;
    unsigned long long inode = 0;
    const auto [deviceEnd, deviceError] = std::from_chars(text.data(), text.data() + colon, device);
    if (deviceError != std::errc{} || deviceEnd != text.data() + colon) {
        return false;
    }
    const auto [inodeEnd, inodeError] =
        std::from_chars(text.data() + colon + 1, text.data() + text.size(), inode);
    if (inodeError != std::errc{} || inodeEnd != text.data() + text.size()) {
        return false;
    }
    struct stat st {};
    return ::fstat(fd, &st) == 0 && st.st_dev == device && st.st_ino == inode;
}

void write(Priority priority, std::string_view text) {
    std::string line;
    static const bool journal = namesStream(std::getenv("JOURNAL_STREAM"), STDERR_FILENO);
    if (journal) {
        line = "<" + std::to_string(static_cast<int>(priority)) + ">";
    }
    line.append(text).push_back('\n');
    // One write: lines of two threads never interleave.
    (void)std::fwrite(line.data(), 1, line.size(), stderr);
    (void)std::fflush(stderr);
}

} // namespace nicer::log
