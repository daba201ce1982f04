// The files nicerd keeps its state in, read at start: the workload chosen at run time (workload.conf,
// workload/PresetFile) and the named programs set at run time (exclusive-programs.conf,
// desktop/ProgramList) through the `key = value` reader they share (util/KeyValueText). What reads is a
// workload nicerd knows and writes back to the same text; a list of names each valid, each once, that writes
// back to the same list; every line the reader hands on is trimmed,
// outside any comment, and split at its first '='.

#include "FuzzSupport.h"
#include "desktop/ProgramList.h"
#include "desktop/ProgramWatch.h"
#include "util/KeyValueText.h"
#include "util/Text.h"
#include "workload/PresetFile.h"
#include "workload/WorkloadChooser.h"

#include <algorithm>
#include <string>

using namespace nicer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input = fuzz::asText(data, size);

    const auto id = workload::readPresetFile(std::string(input), "fuzz");
    if (id) {
        FUZZ_CHECK(workload::WorkloadChooser::known(*id));
        const auto again = workload::readPresetFile(workload::writePresetFile(*id), "again");
        FUZZ_CHECK(again.ok() && *again == *id);
    }
    // An id a client may choose (SetWorkloadPreset checks known()) is saved so that it reads back.
    if (workload::WorkloadChooser::known(input)) {
        const auto saved = workload::readPresetFile(workload::writePresetFile(std::string(input)), "saved");
        FUZZ_CHECK(saved.ok() && *saved == input);
    }

    const auto names = desktop::readProgramListFile(std::string(input), "fuzz");
    if (names) {
        FUZZ_CHECK(desktop::checkProgramList(*names).ok() && *desktop::checkProgramList(*names) == *names);
        const auto again = desktop::readProgramListFile(desktop::writeProgramListFile(*names), "again");
        FUZZ_CHECK(again.ok() && *again == *names);
    }
    // A name a client may set (SetExclusivePrograms checks it) is saved so that it reads back.
    if (desktop::validateProgramName(input)) {
        const std::vector<std::string> one{std::string(input)};
        const auto saved = desktop::readProgramListFile(desktop::writeProgramListFile(one), "saved");
        FUZZ_CHECK(saved.ok() && *saved == one);
    }

    std::size_t lines = 0;
    const auto read = text::forEachKeyValueLine(
        input, "fuzz", "key = value", [&](const text::KeyValueLine& line) -> Result<void> {
            ++lines;
            FUZZ_CHECK(text::trim(line.key) == line.key);
            FUZZ_CHECK(text::trim(line.value) == line.value);
            for (const auto part : {line.key, line.value}) {
                FUZZ_CHECK(part.find_first_of("#\n") == std::string_view::npos);
            }
            FUZZ_CHECK(line.key.find('=') == std::string_view::npos);
            // A key starting with '!' fails its line: the error then names the source and the line.
            if (!line.key.empty() && line.key.front() == '!') {
                return Error{"refused"};
            }
            return {};
        });
    if (!read) {
        FUZZ_CHECK(read.error().message.starts_with("fuzz:"));
    }
    FUZZ_CHECK(lines <= 1 + static_cast<std::size_t>(std::count(input.begin(), input.end(), '\n')));
    return 0;
}
