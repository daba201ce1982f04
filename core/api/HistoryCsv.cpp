#include "api/HistoryCsv.h"

#include "control/Controller.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace nicer::api {

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

/// @p v in full precision: read back, it is the same double.
std::string exact(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}

} // namespace

bool historyHasSplit(const std::vector<Sample>& history) {
    return std::all_of(history.begin(), history.end(), [](const Sample& s) { return s.outside >= 0.0; });
}

std::string historyCsv(const std::vector<Sample>& history) {
    const bool split = historyHasSplit(history);
    std::string csv = split ? "time,idle,work,outside" : "time,idle";
    csv += ",signal,paused,temperature,presence,multiplier,overload_count,quota\n";
    for (const auto& s : history) {
        csv += utcTime(s.timeUSec) + ',' + exact(s.idle);
        if (split) {
            csv += ',' + exact(s.background) + ',' + exact(s.outside);
        }
        const auto signal = s.outsideSignal ? control::Signal::Outside : control::Signal::Machine;
        csv += ',' + std::string(control::signalName(signal)) + (s.paused ? ",1," : ",0,");
        if (s.temperature != kNoTemperature) {
            csv += exact(s.temperature);
        }
        csv += ',' + std::string(control::presenceName(s.presence));
        csv +=
            ',' + exact(s.multiplier) + ',' + std::to_string(s.overloadCount) + ',' + exact(s.quota) + '\n';
    }
    return csv;
}

} // namespace nicer::api
