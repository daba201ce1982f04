#include "control/IdleTrace.h"

#include "util/Text.h"

#include <cmath>
#include <optional>
#include <string_view>

namespace nicer::control {

namespace {

std::string_view unquote(std::string_view s) {
    s = text::trim(s);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
        s = text::trim(s.substr(1, s.size() - 2));
    }
    return s;
}

std::vector<std::string_view> splitFields(std::string_view line) {
    auto fields = text::split(line, ',');
    for (auto& field : fields) {
        field = unquote(field);
    }
    return fields;
}

std::optional<double> parseNumber(std::string_view s) {
    if (!s.empty() && s.front() == '+') {
        s.remove_prefix(1);
    }
    double v = 0.0;
    return text::parseNumber(s, v) ? std::optional<double>(v) : std::nullopt;
}

class TraceParser {
public:
    explicit TraceParser(const std::string& source)
        : m_source(source) {}

    Result<void> line(std::string_view text, std::size_t lineNo) {
        m_lineNo = lineNo;
        if (const auto hash = text.find('#'); hash != std::string_view::npos) {
            text = text.substr(0, hash);
        }
        text = text::trim(text);
        if (text.empty()) {
            return {};
        }
        if (!m_sawFirstLine) {
            m_sawFirstLine = true;
            if (text.find(',') != std::string_view::npos || !parseNumber(unquote(text))) {
                return header(text);
            }
        }
        if (!m_idleColumn) {
            if (text.find(',') != std::string_view::npos) {
                return error("'" + std::string(text) +
                             "' has commas, but the trace has no CSV header with an 'idle' column");
            }
            auto idle = share(unquote(text), "idle fraction");
            if (!idle) {
                return idle.error();
            }
            TracePeriod period;
            period.idle = *idle;
            m_periods.push_back(period);
            return {};
        }
        const auto fields = splitFields(text);
        if (fields.size() != m_columnCount) {
            return error("found " + std::to_string(fields.size()) +
                         " comma-separated fields, but the header has " + std::to_string(m_columnCount));
        }
        TracePeriod period;
        auto idle = share(fields[*m_idleColumn], "idle fraction");
        if (!idle) {
            return idle.error();
        }
        period.idle = *idle;
        if (m_workColumn) {
            auto work = share(fields[*m_workColumn], "work's share");
            auto outside = share(fields[*m_outsideColumn], "outside share");
            if (!work || !outside) {
                return !work ? work.error() : outside.error();
            }
            if (*work + *outside > 1.0 + 1e-6) {
                return error("the work's share " + std::string(fields[*m_workColumn]) +
                             " and the outside share " + std::string(fields[*m_outsideColumn]) +
                             " add up to more than the whole machine");
            }
            period.work = *work;
            period.outside = *outside;
        }
        if (m_signalColumn) {
            const auto field = fields[*m_signalColumn];
            const auto signal = parseSignal(text::toLowerAscii(field));
            if (!signal || *signal == Signal::Auto) {
                return error("'" + std::string(field) +
                             "' is not a signal; each period's is machine or outside");
            }
            if (*signal == Signal::Outside && !m_workColumn) {
                return error(
                    "the period answered the outside signal, but the trace has no 'work' and 'outside' "
                    "columns to replay it with");
            }
            period.signal = *signal;
        }
        if (m_pausedColumn) {
            const auto field = text::toLowerAscii(fields[*m_pausedColumn]);
            if (field != "0" && field != "1" && field != "false" && field != "true") {
                return error("'" + std::string(fields[*m_pausedColumn]) +
                             "' is not a paused flag; each period's is 0 or 1");
            }
            period.paused = field == "1" || field == "true";
        }
        if (m_temperatureColumn && !fields[*m_temperatureColumn].empty()) {
            const auto field = fields[*m_temperatureColumn];
            const auto celsius = parseNumber(field);
            if (!celsius || !std::isfinite(*celsius)) {
                return error("'" + std::string(field) +
                             "' is not a temperature; each period's is in °C, or empty without a sensor");
            }
            period.temperature = *celsius;
        }
        if (m_presenceColumn) {
            const auto field = fields[*m_presenceColumn];
            const auto presence = parsePresence(text::toLowerAscii(field));
            if (!presence) {
                return error("'" + std::string(field) +
                             "' is not a presence; each period's is here, away or unknown");
            }
            period.presence = *presence;
        }
        m_periods.push_back(period);
        return {};
    }

    std::vector<TracePeriod> take() { return std::move(m_periods); }

private:
    Result<void> header(std::string_view text) {
        const auto fields = splitFields(text);
        for (std::size_t i = 0; i < fields.size(); ++i) {
            const auto name = text::toLowerAscii(fields[i]);
            if (name == "idle") {
                m_idleColumn = i;
            } else if (name == "work" || name == "background") {
                m_workColumn = i;
            } else if (name == "outside") {
                m_outsideColumn = i;
            } else if (name == "signal") {
                m_signalColumn = i;
            } else if (name == "paused") {
                m_pausedColumn = i;
            } else if (name == "temperature") {
                m_temperatureColumn = i;
            } else if (name == "presence") {
                m_presenceColumn = i;
            }
        }
        if (!m_idleColumn) {
            return error("'" + std::string(text) +
                         "' is neither an idle fraction nor a CSV header with an 'idle' column");
        }
        if (m_workColumn.has_value() != m_outsideColumn.has_value()) {
            return error("'" + std::string(text) + "' has " + (m_workColumn ? "a 'work'" : "an 'outside'") +
                         " column but no " + (m_workColumn ? "'outside'" : "'work'") +
                         " one; the split signal needs both (or neither, for the idle signal alone)");
        }
        m_columnCount = fields.size();
        return {};
    }

    Result<double> share(std::string_view field, const std::string& what) {
        const auto v = parseNumber(field);
        if (!v) {
            return error("'" + std::string(field) + "' is not a number; each " + what +
                         " is a share of the machine from 0 to 1");
        }
        if (!std::isfinite(*v) || *v < 0.0 || *v > 1.0) {
            return error(what + " " + std::string(field) + " is outside 0..1");
        }
        return *v;
    }

    Error error(const std::string& what) const {
        return Error{m_source + ":" + std::to_string(m_lineNo) + ": " + what};
    }

    const std::string& m_source;
    std::size_t m_lineNo = 0;
    bool m_sawFirstLine = false;
    std::optional<std::size_t> m_idleColumn;
    std::optional<std::size_t> m_workColumn;
    std::optional<std::size_t> m_outsideColumn;
    std::optional<std::size_t> m_signalColumn;
    std::optional<std::size_t> m_pausedColumn;
    std::optional<std::size_t> m_temperatureColumn;
    std::optional<std::size_t> m_presenceColumn;
    std::size_t m_columnCount = 0;
    std::vector<TracePeriod> m_periods;
};

} // namespace

Result<std::vector<TracePeriod>> readTrace(std::istream& in, const std::string& source) {
    TraceParser parser(source);
    std::string text;
    std::size_t lineNo = 0;
    while (std::getline(in, text)) {
        if (auto ok = parser.line(text, ++lineNo); !ok) {
            return ok.error();
        }
    }
    if (in.bad()) {
        return Error{source + ": read error after line " + std::to_string(lineNo)};
    }
    return parser.take();
}

} // namespace nicer::control
