#include "HistoryCommand.h"

#include "ExitCode.h"
#include "api/HistoryCsv.h"
#include "dbus/client/DaemonClient.h"

#include <cstdio>
#include <iostream>

namespace nicer::cli {

int runHistory() {
    auto client = dbus::DaemonClient::connect();
    if (!client) {
        std::cerr << "nicer: " << client.error().message << '\n';
        return kExitFailure;
    }
    const auto history = client->history();
    if (!history) {
        std::cerr << "nicer history: " << history.error().message << '\n';
        return kExitFailure;
    }
    if (!api::historyHasSplit(*history)) {
        std::cerr << "nicer history: nicerd could not read your user manager's CPU time in every period; the "
                     "work and outside columns are left out (the trace replays with the machine signal)\n";
    }
    std::fputs(api::historyCsv(*history).c_str(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
