#include "util/UniqueFd.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <utility>

using namespace nicer;

namespace {

bool isOpen(int fd) {
    return fcntl(fd, F_GETFD) != -1;
}

int openNull() {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    return fd;
}

} // namespace

TEST_CASE("UniqueFd closes what it holds when it goes away", "[UniqueFd]") {
    const int raw = openNull();
    {
        const UniqueFd fd(raw);
        CHECK(fd.valid());
        CHECK(fd.get() == raw);
        CHECK(isOpen(raw));
    }
    CHECK_FALSE(isOpen(raw));

    const UniqueFd none;
    CHECK_FALSE(none);
    CHECK(none.get() == -1);
}

TEST_CASE("UniqueFd hands its descriptor over on move, and closes the one it replaces", "[UniqueFd]") {
    const int first = openNull();
    const int second = openNull();
    UniqueFd a(first);
    UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid()); // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
    CHECK(b.get() == first);

    UniqueFd c(second);
    c = std::move(b);
    CHECK(c.get() == first);
    CHECK_FALSE(isOpen(second));
    CHECK(isOpen(first));

    c.reset();
    CHECK_FALSE(c.valid());
    CHECK_FALSE(isOpen(first));
}
