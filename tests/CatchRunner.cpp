#define CATCH_CONFIG_RUNNER
#include "CatchRunner.h"

#include <catch2/catch.hpp>

int nicer::test::runCatch(int argc, char** argv) {
    return Catch::Session().run(argc, argv);
}
