// nicer: command-line client of the nicer core.
#include "CommandLine.h"
#include "ExitCode.h"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    // Errors are values inside; what escapes (out of memory, a bug) still ends with a message, not abort().
    try {
        return nicer::cli::runCommandLine(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "nicer: internal error: " << e.what() << '\n';
    } catch (...) {
        std::cerr << "nicer: internal error\n";
    }
    return nicer::cli::kExitFailure;
}
