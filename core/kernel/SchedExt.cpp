#include "kernel/SchedExt.h"

#include "util/Text.h"
#include "util/TextFile.h"

namespace nicer::kernel {

std::optional<std::string> runningSchedExt(const std::filesystem::path& dir) {
    auto state = readTextFile(dir / "state");
    if (!state || text::trim(*state) != "enabled") {
        return std::nullopt;
    }
    auto ops = readTextFile(dir / "root" / "ops");
    const std::string name = ops ? std::string(text::trim(*ops)) : std::string();
    return name.empty() ? std::string("unknown") : name;
}

} // namespace nicer::kernel
