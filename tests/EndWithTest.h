#pragma once

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace nicer::test {

/// Called in a child between fork() and exec(): the child gets SIGTERM when the test process ends, even when
/// it aborts or is killed and no destructor runs. A nicerd left behind would answer the next test's calls on
/// the session bus and fail it for a reason of the test before. @p test: the test's pid, read before fork().
inline void endWithTest(pid_t test) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != test) { // the test ended before prctl
        ::_exit(127);
    }
}

} // namespace nicer::test
