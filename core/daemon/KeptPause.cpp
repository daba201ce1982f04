#include "daemon/KeptPause.h"

#include "util/TextFile.h"

#include <system_error>

namespace nicer::daemon {

bool pauseKept(const std::filesystem::path& file) {
    std::error_code ec;
    return !file.empty() && std::filesystem::exists(file, ec);
}

Result<void> keepPause(const std::filesystem::path& file) {
    if (file.empty()) {
        return {};
    }
    if (auto kept =
            writeFileAtomically(file, "The volunteer work is paused until `nicer resume`: nicerd starts "
                                      "it paused while this file is here.\n");
        !kept) {
        return Error{"the work is paused, but the pause will not hold if nicerd restarts: " +
                     kept.error().message};
    }
    return {};
}

Result<void> forgetPause(const std::filesystem::path& file) {
    if (std::error_code ec; !file.empty() && !std::filesystem::remove(file, ec) && ec) {
        return Error{"the work runs again, but " + file.string() + " could not be removed (" + ec.message() +
                     "): nicerd will start it paused after a restart; delete that file"};
    }
    return {};
}

} // namespace nicer::daemon
