#include "desktop/ProgramList.h"

#include "desktop/ProgramWatch.h"
#include "util/KeyValueText.h"
#include "util/Text.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace nicer::desktop {

namespace {

/// The words of @p text apart by spaces, tabs or CRs.
std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    for (auto word = text::nextToken(text); !word.empty(); word = text::nextToken(text)) {
        out.emplace_back(word);
    }
    return out;
}

} // namespace

std::string joinedNames(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) {
        text.append(text.empty() ? "" : " ").append(name);
    }
    return text;
}

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

Result<std::vector<std::string>> editProgramList(const std::vector<std::string>& current,
                                                 ProgramListEdit edit,
                                                 const std::vector<std::string>& names) {
    auto given = checkProgramList(names);
    if (!given) {
        return given.error();
    }
    switch (edit) {
    case ProgramListEdit::Add: {
        auto both = current;
        both.insert(both.end(), given->begin(), given->end());
        return checkProgramList(both);
    }
    case ProgramListEdit::Remove: {
        auto left = current;
        for (const auto& name : *given) {
            const auto found = std::find(left.begin(), left.end(), name);
            if (found == left.end()) {
                return Error{"'" + name + "' is not among the named programs (" +
                             (current.empty() ? std::string("there are none") : joinedNames(current)) + ")"};
            }
            left.erase(found);
        }
        return left;
    }
    case ProgramListEdit::Replace:
        return given;
    }
    return given;
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
    const std::string list = joinedNames(names);
    return "# The programs that pause the work while they run, set at run time (nicer exclusive-programs, "
           "the tray). Written by nicerd.\nprograms =" +
           (list.empty() ? "" : " " + list) + "\n";
}

} // namespace nicer::desktop
