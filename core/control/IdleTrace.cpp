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
            return value(unquote(text));
        }
        const auto fields = splitFields(text);
        if (fields.size() != m_columnCount) {
            return error("found " + std::to_string(fields.size()) +
                         " comma-separated fields, but the header has " + std::to_string(m_columnCount));
        }
        return value(fields[*m_idleColumn]);
    }

    std::vector<double> take() { return std::move(m_values); }

private:
    Result<void> header(std::string_view text) {
        const auto fields = splitFields(text);
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (text::toLowerAscii(fields[i]) == "idle") {
                m_idleColumn = i;
                m_columnCount = fields.size();
                return {};
            }
        }
        return error("'" + std::string(text) +
                     "' is neither an idle fraction nor a CSV header with an 'idle' column");
    }

    Result<void> value(std::string_view field) {
        const auto v = parseNumber(field);
        if (!v) {
            return error("'" + std::string(field) +
                         "' is not a number; each sample is an idle fraction from 0 to 1");
        }
        if (!std::isfinite(*v) || *v < 0.0 || *v > 1.0) {
            return error("idle fraction " + std::string(field) + " is outside 0..1");
        }
        m_values.push_back(*v);
        return {};
    }

    Error error(const std::string& what) const {
        return Error{m_source + ":" + std::to_string(m_lineNo) + ": " + what};
    }

    const std::string& m_source;
    std::size_t m_lineNo = 0;
    bool m_sawFirstLine = false;
    std::optional<std::size_t> m_idleColumn;
    std::size_t m_columnCount = 0;
    std::vector<double> m_values;
};

} // namespace

Result<std::vector<double>> readIdleTrace(std::istream& in, const std::string& source) {
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
