#include "ProgramsCommand.h"

#include "ExitCode.h"
#include "dbus/client/DaemonClient.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

namespace nicer::cli {

namespace {

void printPrograms(const api::DaemonState& s) {
    if (s.exclusivePrograms.empty()) {
        std::cout
            << "No named programs: the work does not wait for any (nicer exclusive-programs add NAME)\n";
        return;
    }
    for (const auto& name : s.exclusivePrograms) {
        const bool runs =
            std::find(s.programsRunning.begin(), s.programsRunning.end(), name) != s.programsRunning.end();
        std::cout << name << (runs ? "  (running: the work is paused)" : "") << '\n';
    }
}

} // namespace

int runPrograms(const ProgramsOptions& o) {
    // Names that cannot be a program's are refused before nicerd is asked.
    if (auto valid = desktop::checkProgramList(o.names); !valid) {
        std::cerr << "nicer exclusive-programs: " << valid.error().message << '\n';
        return kExitBadInput;
    }
    auto client = dbus::DaemonClient::connect();
    if (!client) {
        std::cerr << "nicer: " << client.error().message << '\n';
        return kExitFailure;
    }
    auto status = client->status();
    if (!status) {
        std::cerr << "nicer exclusive-programs: " << status.error().message << '\n';
        return kExitFailure;
    }
    if (!o.edit) {
        if (o.json) {
            std::cout << nlohmann::json{{"exclusive_programs", status->exclusivePrograms},
                                        {"programs_running", status->programsRunning}}
                             .dump(2)
                      << '\n';
        } else {
            printPrograms(*status);
        }
        return kExitOk;
    }
    auto edited = desktop::editProgramList(status->exclusivePrograms, *o.edit, o.names);
    if (!edited) {
        std::cerr << "nicer exclusive-programs: " << edited.error().message << '\n';
        return kExitBadInput;
    }
    if (auto set = client->setExclusivePrograms(*edited); !set) {
        std::cerr << "nicer exclusive-programs: " << set.error().message << '\n';
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace nicer::cli
