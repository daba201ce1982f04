#include "desktop/ProgramListFile.h"

#include "desktop/ProgramWatch.h"
#include "util/KeyValueText.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace nicer::desktop {

namespace {

/// The words of @p text apart by spaces or tabs.
std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto start = text.find_first_not_of(" \t", at);
        if (start == std::string_view::npos) {
            break;
        }
        const auto end = std::min(text.find_first_of(" \t", start), text.size());
        out.emplace_back(text.substr(start, end - start));
        at = end;
    }
    return out;
}

} // namespace

Result<std::vector<std::string>> checkProgramList(const std::vector<std::string>& names) {
    std::vector<std::string> checked;
    for (const auto& name : names) {
        if (auto valid = validateProgramName(name); !valid) {
            return valid.error();
        }
        if (std::find(checked.begin(), checked.end(), name) == checked.end()) {
            checked.push_back(name);
        }
    }
    return checked;
}

Result<std::vector<std::string>> readProgramListFile(const std::string& text, const std::string& source) {
    if (auto whole = text::requireWholeLines(text, source); !whole) {
        return whole.error();
    }
    std::optional<std::vector<std::string>> names;
    if (auto read =
            text::forEachKeyValueLine(text, source, "programs = NAME ...",
                                      [&](const text::KeyValueLine& line) -> Result<void> {
                                          if (line.key != "programs") {
                                              return Error{"unknown key '" + std::string(line.key) +
                                                           "': the file holds only 'programs = NAME ...'"};
                                          }
                                          if (names) {
                                              return Error{"a second 'programs' line: the file holds one"};
                                          }
                                          auto checked = checkProgramList(words(line.value));
                                          if (!checked) {
                                              return checked.error();
                                          }
                                          names = std::move(*checked);
                                          return {};
                                      });
        !read) {
        return read.error();
    }
    if (!names) {
        return Error{source + ": no 'programs = NAME ...' line"};
    }
    return *names;
}

std::string writeProgramListFile(const std::vector<std::string>& names) {
    std::string text = "# The programs that pause the work while they run, set at run time (nicer "
                       "exclusive-programs, the tray). Written by nicerd.\nprograms =";
    for (const auto& name : names) {
        text.append(" ").append(name);
    }
    return text + "\n";
}

} // namespace nicer::desktop
