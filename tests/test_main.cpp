// Main of the unit tests: Catch2's runner and nothing else.
#include "CatchRunner.h"

int main(int argc, char** argv) {
    return nicer::test::runCatch(argc, argv);
}
