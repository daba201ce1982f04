#include "presence/IdleDetectShmem.h"

#include "util/Log.h"
#include "util/UniqueFd.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace nicer::presence {

namespace {

constexpr std::size_t kSize = 2 * sizeof(std::int64_t);
constexpr std::chrono::seconds kOpenRetryInterval{60};

std::string errnoText(int error) {
    return std::generic_category().message(error);
}

std::string userText(uid_t uid) {
    const passwd* user = ::getpwuid(uid); // nicerd's loop has no other thread
    return user != nullptr ? "user " + std::string(user->pw_name) + " (uid " + std::to_string(uid) + ")"
                           : "uid " + std::to_string(uid);
}

std::int64_t seconds(wallclock::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

} // namespace

IdleDetectShmem::~IdleDetectShmem() {
    if (m_map != nullptr) {
        ::munmap(m_map, kSize);
    }
}

void IdleDetectShmem::open(wallclock::TimePoint now) {
    m_lastTry = now;
    const std::string path = "/dev/shm" + m_name;
    // Created by nicerd, or nicerd's from an earlier run: never one of another user's, whatever its mode
    // says.
    UniqueFd fd(::shm_open(m_name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0644));
    if (!fd.valid() && errno == EEXIST) {
        fd = UniqueFd(::shm_open(m_name.c_str(), O_RDWR, 0));
        if (!fd.valid() && errno == EACCES) {
            fd = UniqueFd(::shm_open(m_name.c_str(), O_RDONLY, 0)); // only to say whose it is
        }
    }
    if (!fd.valid()) {
        m_note = "cannot open " + path + ": " + errnoText(errno);
        return;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        m_note = "cannot read " + path + ": " + errnoText(errno);
        return;
    }
    if (st.st_uid != ::geteuid()) {
        m_note =
            path + " belongs to " + userText(st.st_uid) +
            ": BOINC reads that one, and nicer leaves it alone (another volunteer's nicer, or idle_detect)";
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        m_note = path + " is not a shared-memory object";
        return;
    }
    // Readable by BOINC's user whatever nicerd's umask, writable by nicerd's user alone.
    if ((st.st_mode & 07777) != 0644 && ::fchmod(fd.get(), 0644) != 0) {
        m_note = "cannot make " + path + " readable by BOINC: " + errnoText(errno);
        return;
    }
    if (static_cast<std::size_t>(st.st_size) < kSize && ::ftruncate(fd.get(), kSize) != 0) {
        m_note = "cannot size " + path + ": " + errnoText(errno);
        return;
    }
    void* map = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) {
        m_note = "cannot map " + path + ": " + errnoText(errno);
        return;
    }
    m_map = static_cast<std::int64_t*>(map);
    m_note = "your last input published in " + path + " for BOINC";
    log::notice() << "nicerd: " << m_note;
}

void IdleDetectShmem::publish(wallclock::TimePoint now, wallclock::TimePoint lastInput) {
    if (m_map == nullptr) {
        if (!m_note.empty() && now - m_lastTry < kOpenRetryInterval && now >= m_lastTry) {
            return;
        }
        open(now);
        if (m_map == nullptr) {
            log::warning() << "nicerd: " << m_note;
            return;
        }
    }
    // BOINC reads without a lock: each value whole, the input before the update that vouches for it.
    std::atomic_ref<std::int64_t>(m_map[1]).store(seconds(lastInput), std::memory_order_relaxed);
    std::atomic_ref<std::int64_t>(m_map[0]).store(seconds(now), std::memory_order_release);
}

} // namespace nicer::presence
