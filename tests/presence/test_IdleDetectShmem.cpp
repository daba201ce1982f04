// BOINC's /idle_detect_shmem as nicerd writes it, read as BOINC's client reads it (client/hostinfo_unix.cpp,
// get_idle_time_from_daemon: shm_open read-only, at least two int64, mapped once, the update at most 60 s
// old); an object of another user's left alone and named; the same object kept across writers, since BOINC
// keeps its first mapping. Each case uses an object of its own, not the machine's /idle_detect_shmem.
#include "presence/IdleDetectShmem.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fcntl.h>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

std::string objectName(const char* what) {
    return "/nicer-test-" + std::string(what) + "-" + std::to_string(::getpid());
}

/// BOINC's reader: maps the object once, as the client does for its whole run.
class BoincReader {
public:
    explicit BoincReader(const std::string& name) {
        const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
        REQUIRE(fd >= 0);
        struct stat st {};
        REQUIRE(::fstat(fd, &st) == 0);
        REQUIRE(static_cast<std::size_t>(st.st_size) >= 2 * sizeof(std::int64_t));
        void* map = ::mmap(nullptr, 2 * sizeof(std::int64_t), PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        REQUIRE(map != MAP_FAILED);
        m_map = static_cast<const std::int64_t*>(map);
    }
    ~BoincReader() { ::munmap(const_cast<std::int64_t*>(m_map), 2 * sizeof(std::int64_t)); }
    BoincReader(const BoincReader&) = delete;
    BoincReader& operator=(const BoincReader&) = delete;

    /// The idle time BOINC takes at @p now, or none where it falls back to its own detection.
    std::optional<std::int64_t> idleSeconds(std::int64_t now) const {
        const std::int64_t update = m_map[0];
        if (update > now + 10 || update < now - 60) {
            return std::nullopt;
        }
        return now - m_map[1];
    }

private:
    const std::int64_t* m_map = nullptr;
};

struct Unlinked {
    std::string name;
    ~Unlinked() { ::shm_unlink(name.c_str()); }
};

std::int64_t epochSeconds(wallclock::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

} // namespace

TEST_CASE("BOINC reads the last input nicerd publishes, while it is fresh") {
    const Unlinked object{objectName("fresh")};
    ::umask(077); // nicerd's umask does not keep BOINC's user out
    presence::IdleDetectShmem shmem(object.name);
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    shmem.publish(t0, t0 - 42s);
    ::umask(022);
    REQUIRE(shmem.publishing());
    CHECK(shmem.note() == "your last input published in /dev/shm" + object.name + " for BOINC");
    struct stat st {};
    REQUIRE(::stat(("/dev/shm" + object.name).c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    CHECK(st.st_uid == ::geteuid());

    const BoincReader boinc(object.name);
    CHECK(boinc.idleSeconds(epochSeconds(t0)) == 42);
    CHECK(boinc.idleSeconds(epochSeconds(t0) + 30) == 72);
    CHECK_FALSE(boinc.idleSeconds(epochSeconds(t0) + 61)); // not updated for a minute: BOINC's own detection
    shmem.publish(t0 + 61s, t0 + 60s);
    CHECK(boinc.idleSeconds(epochSeconds(t0) + 61) == 1);
}

TEST_CASE("a new writer (nicerd restarted) writes the same object, which BOINC has kept mapped") {
    const Unlinked object{objectName("restart")};
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    std::optional<presence::IdleDetectShmem> first(std::in_place, object.name);
    first->publish(t0, t0 - 5s);
    REQUIRE(first->publishing());
    const BoincReader boinc(object.name);
    first.reset(); // nicerd ends: the object stays, its update stops
    CHECK(::access(("/dev/shm" + object.name).c_str(), F_OK) == 0);
    presence::IdleDetectShmem second(object.name);
    second.publish(t0 + 100s, t0 + 90s);
    REQUIRE(second.publishing());
    CHECK(boinc.idleSeconds(epochSeconds(t0) + 100) == 10);
}

TEST_CASE("an object of another user's is left alone, and the note says whose it is") {
    const Unlinked object{objectName("squatted")};
    // Another user's, writable by all: a squatter's invitation nicer declines.
    const int fd = ::shm_open(object.name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0666);
    REQUIRE(fd >= 0);
    REQUIRE(::fchmod(fd, 0666) == 0);
    REQUIRE(::ftruncate(fd, 16) == 0);
    REQUIRE(::fchown(fd, 65534, 65534) == 0);
    ::close(fd);
    presence::IdleDetectShmem shmem(object.name);
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    shmem.publish(t0, t0);
    CHECK_FALSE(shmem.publishing());
    CHECK_THAT(shmem.note(),
               Catch::StartsWith("/dev/shm" + object.name + " belongs to user nobody (uid 65534)"));
    // Asked again within the minute: not opened again, the note stays.
    shmem.publish(t0 + 10s, t0 + 10s);
    CHECK_FALSE(shmem.publishing());
    struct stat st {};
    REQUIRE(::stat(("/dev/shm" + object.name).c_str(), &st) == 0);
    CHECK(st.st_uid == 65534u); // untouched
}
