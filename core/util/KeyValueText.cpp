#include "util/KeyValueText.h"

#include "util/Text.h"

namespace nicer::text {

Result<void> forEachKeyValueLine(std::string_view text, const std::string& source, std::string_view form,
                                 const std::function<Result<void>(const KeyValueLine&)>& onLine) {
    std::size_t lineNo = 0;
    for (std::string_view line : split(text, '\n')) {
        ++lineNo;
        const auto view = trim(line.substr(0, line.find('#')));
        if (view.empty()) {
            continue;
        }
        const std::string where = source + ":" + std::to_string(lineNo) + ": ";
        const auto eq = view.find('=');
        if (eq == std::string_view::npos) {
            return Error{where + "expected '" + std::string(form) + "', found '" + std::string(view) + "'"};
        }
        if (auto done = onLine({trim(view.substr(0, eq)), trim(view.substr(eq + 1))}); !done) {
            return Error{where + done.error().message};
        }
    }
    return {};
}

Result<void> requireWholeLines(std::string_view text, const std::string& source) {
    if (text.empty()) {
        return Error{source + " is empty, but nicerd never writes it empty: it was cut short"};
    }
    if (text.back() != '\n') {
        return Error{source + " ends in the middle of a line: it was cut short"};
    }
    return {};
}

} // namespace nicer::text
