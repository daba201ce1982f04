#include "workload/PresetFile.h"

#include "util/KeyValueText.h"
#include "workload/WorkloadPresets.h"

#include <optional>
#include <string_view>

namespace nicer::workload {

Result<std::string> readPresetFile(const std::string& text, const std::string& source) {
    if (auto whole = text::requireWholeLines(text, source); !whole) {
        return whole.error();
    }
    std::optional<std::string> id;
    if (auto read = text::forEachKeyValueLine(
            text, source, "preset = ID",
            [&](const text::KeyValueLine& line) -> Result<void> {
                if (line.key != "preset") {
                    return Error{"unknown key '" + std::string(line.key) +
                                 "': the file holds only 'preset = ID'"};
                }
                if (!findPreset(line.value) && line.value != kCustomPreset) {
                    return Error{"preset = '" + std::string(line.value) + "' is unknown: the workloads are " +
                                 presetIdList()};
                }
                id = std::string(line.value);
                return {};
            });
        !read) {
        return read.error();
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
