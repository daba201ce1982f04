#include "HistoryCommand.h"

#include "ExitCode.h"
#include "api/Sample.h"
#include "control/Controller.h"
#include "dbus/client/DaemonClient.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

namespace nicer::cli {

namespace {

/// µs since the epoch as UTC "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string utcTime(std::uint64_t timeUSec) {
    const std::time_t seconds = static_cast<std::time_t>(timeUSec / 1'000'000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char text[40];
    const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(text + n, sizeof text - n, ".%03uZ", static_cast<unsigned>(timeUSec / 1000 % 1000));
    return text;
}

} // namespace

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
    // The split columns only when every period has them: a trace has them for every period or none.
    const bool split =
        std::all_of(history->begin(), history->end(), [](const api::Sample& s) { return s.outside >= 0.0; });
    if (!split) {
        std::cerr << "nicer history: nicerd could not read your user manager's CPU time in every period; the "
                     "work and outside columns are left out (the trace replays with the machine signal)\n";
    }
    std::printf("time,idle%s,signal,paused,multiplier,overload_count,quota\n", split ? ",work,outside" : "");
    for (const auto& s : *history) {
        std::printf("%s,%.17g", utcTime(s.timeUSec).c_str(), s.idle);
        if (split) {
            std::printf(",%.17g,%.17g", s.background, s.outside);
        }
        const auto signal = s.outsideSignal ? control::Signal::Outside : control::Signal::Machine;
        std::printf(",%s,%d,%.17g,%u,%.17g\n", std::string(control::signalName(signal)).c_str(),
                    s.paused ? 1 : 0, s.multiplier, s.overloadCount, s.quota);
    }
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
