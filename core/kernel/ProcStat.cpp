#include "kernel/ProcStat.h"

#include "util/Text.h"
#include "util/TextFile.h"

#include <array>

namespace nicer::kernel {

namespace {

constexpr std::size_t kMinCpuFields = 4; // user nice system idle: present on every kernel
constexpr std::size_t kKnownFields = 10;

struct LineContext {
    std::string_view source;
    std::size_t lineNo;

    Error error(const std::string& what) const {
        return Error{std::string(source) + ":" + std::to_string(lineNo) + ": " + what};
    }
};

/// Parses the counters after the label of one cpu line.
Result<CpuTimes> parseCounters(std::string_view rest, std::string_view label, const LineContext& at) {
    std::array<std::uint64_t, kKnownFields> values{};
    std::size_t count = 0;
    for (auto token = text::nextToken(rest); !token.empty(); token = text::nextToken(rest)) {
        std::uint64_t v = 0;
        if (!text::parseNumber(token, v)) {
            return at.error("field " + std::to_string(count + 1) + " of '" + std::string(label) + "' is '" +
                            std::string(token) + "', not a tick count");
        }
        if (count < kKnownFields) { // newer kernels may add fields: ignore them
            values[count] = v;
        }
        ++count;
    }
    if (count < kMinCpuFields) {
        return at.error("'" + std::string(label) + "' has " + std::to_string(count) +
                        " fields; at least 4 (user nice system idle) are needed");
    }
    return CpuTimes{values[0], values[1], values[2], values[3], values[4],
                    values[5], values[6], values[7], values[8], values[9]};
}

} // namespace

Result<ProcStatSnapshot> parseProcStat(std::string_view text, std::string_view source) {
    ProcStatSnapshot snap;
    bool haveAggregate = false;
    std::size_t lineNo = 0;
    while (!text.empty()) {
        const auto eol = text.find('\n');
        auto line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        ++lineNo;

        if (line.substr(0, 3) != "cpu") {
            continue;
        }
        const auto label = text::nextToken(line);
        const LineContext at{source, lineNo};
        auto counters = parseCounters(line, label, at);
        if (!counters) {
            return counters.error();
        }
        if (label == "cpu") {
            if (haveAggregate) {
                return at.error("a second aggregate 'cpu' line");
            }
            snap.aggregate = *counters;
            haveAggregate = true;
            continue;
        }
        int id = -1;
        if (!text::parseNumber(label.substr(3), id) || id < 0) {
            return at.error("'" + std::string(label) + "' is not a cpu line (expected cpu or cpuN)");
        }
        if (!snap.perCpu.emplace(id, *counters).second) {
            return at.error("'" + std::string(label) + "' appears twice");
        }
    }
    if (!haveAggregate) {
        return Error{std::string(source) + " has no aggregate 'cpu' line: is this really /proc/stat?"};
    }
    return snap;
}

Result<ProcStatSnapshot> readProcStat(const std::string& path) {
    auto text = readTextFile(path);
    if (!text) {
        return text.error();
    }
    return parseProcStat(*text, path);
}

} // namespace nicer::kernel
