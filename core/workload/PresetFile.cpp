#include "workload/PresetFile.h"

#include "util/Text.h"
#include "workload/WorkloadPresets.h"

#include <optional>
#include <sstream>
#include <string_view>

namespace nicer::workload {

Result<std::string> readPresetFile(const std::string& text, const std::string& source) {
    std::istringstream in(text);
    std::optional<std::string> id;
    std::size_t lineNo = 0;
    for (std::string line; std::getline(in, line);) {
        ++lineNo;
        std::string_view view = line;
        view = text::trim(view.substr(0, view.find('#')));
        if (view.empty()) {
            continue;
        }
        const std::string where = source + ":" + std::to_string(lineNo) + ": ";
        const auto eq = view.find('=');
        if (eq == std::string_view::npos) {
            return Error{where + "expected 'preset = ID', found '" + std::string(view) + "'"};
        }
        const auto key = text::trim(view.substr(0, eq));
        const auto value = text::trim(view.substr(eq + 1));
        if (key != "preset") {
            return Error{where + "unknown key '" + std::string(key) + "': the file holds only 'preset = ID'"};
        }
        if (!findPreset(value) && value != kCustomPreset) {
            return Error{where + "preset = '" + std::string(value) + "' is unknown: the workloads are " +
                         presetIdList()};
        }
        id = std::string(value);
    }
    if (!id) {
        return Error{source + ": no 'preset = ID' line"};
    }
    return *id;
}

std::string writePresetFile(const std::string& id) {
    return "# The workload chosen at run time (nicer workload, the tray). Written by nicerd.\npreset = " +
           id + "\n";
}

} // namespace nicer::workload
