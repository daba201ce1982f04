#include "util/Log.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <sys/stat.h>

using nicer::log::namesStream;

namespace {

/// "DEVICE:INODE" of the file open as @p fd, as systemd writes JOURNAL_STREAM.
std::string streamOf(int fd) {
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

} // namespace

TEST_CASE("a log line carries its priority only where JOURNAL_STREAM names standard error", "[Log]") {
    std::FILE* journal = std::tmpfile();
    std::FILE* other = std::tmpfile();
    REQUIRE(journal != nullptr);
    REQUIRE(other != nullptr);
    const std::string stream = streamOf(::fileno(journal));

    CHECK(namesStream(stream.c_str(), ::fileno(journal)));
    // Inherited by a program that writes elsewhere: a terminal, a file.
    CHECK_FALSE(namesStream(stream.c_str(), ::fileno(other)));
    CHECK_FALSE(namesStream(nullptr, ::fileno(journal)));
    for (const char* bad : {"", ":", "12", "12:", ":34", "12:34x", "x12:34", "12:34:56", "-1:2"}) {
        CAPTURE(bad);
        CHECK_FALSE(namesStream(bad, ::fileno(journal)));
    }
    std::fclose(journal);
    std::fclose(other);
}
