// LD_PRELOAD shim for the wall-clock fault test: shifts CLOCK_REALTIME (clock_gettime, gettimeofday, time)
// by the signed number of seconds in the file $NICER_WALLCLOCK_OFFSET_FILE, read at every call, and leaves
// every other clock and timerfd alone, as a real clock step does. (libfaketime also rewrites the deadlines
// of CLOCK_MONOTONIC timerfds, which a real step never does, and so breaks sd-event: EINVAL after +1 day.)
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dlfcn.h>
#include <sys/time.h>

namespace {

long long offsetSeconds() {
    const char* path = std::getenv("NICER_WALLCLOCK_OFFSET_FILE");
    if (path == nullptr) {
        return 0;
    }
    FILE* file = std::fopen(path, "re");
    if (file == nullptr) {
        return 0;
    }
    long long offset = 0;
    if (std::fscanf(file, "%lld", &offset) != 1) {
        offset = 0;
    }
    std::fclose(file);
    return offset;
}

using ClockGettime = int (*)(clockid_t, struct timespec*);

ClockGettime realClockGettime() {
    static auto real = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    return real;
}

} // namespace

extern "C" {

int clock_gettime(clockid_t clock, struct timespec* ts) {
    const int r = realClockGettime()(clock, ts);
    if (r == 0 && ts != nullptr && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        ts->tv_sec += offsetSeconds();
    }
    return r;
}

int gettimeofday(struct timeval* tv, void*) {
    struct timespec ts {};
    const int r = clock_gettime(CLOCK_REALTIME, &ts);
    if (r == 0 && tv != nullptr) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

time_t time(time_t* out) {
    struct timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != nullptr) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}

} // extern "C"
