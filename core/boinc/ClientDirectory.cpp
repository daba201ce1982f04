#include "boinc/ClientDirectory.h"

#include "boinc/GlobalPrefsOverride.h"
#include "util/Text.h"
#include "util/TextFile.h"

#include <array>
#include <cerrno>
#include <sys/random.h>
#include <system_error>

namespace nicer::boinc {

namespace fs = std::filesystem;

namespace {

bool present(const fs::path& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

/// 32 random hex digits, as the client makes its own password.
Result<std::string> randomPassword() {
    std::array<unsigned char, 16> bytes{};
    if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
        return Error{std::string("cannot make a GUI RPC password: ") +
                     std::generic_category().message(errno)};
    }
    return text::lowerHex(bytes);
}

/// The file's text, or "" when it does not exist.
Result<std::string> readIfPresent(const fs::path& path) {
    return present(path) ? readTextFile(path) : Result<std::string>{std::string()};
}

} // namespace

Result<void> prepareClientDirectory(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return Error{"cannot create the BOINC client's directory " + dir.string() + ": " + ec.message()};
    }
    if (!present(dir / kPasswordFile)) {
        auto password = randomPassword();
        if (!password) {
            return password.error();
        }
        if (auto written = writeFileAtomically(dir / kPasswordFile, *password + "\n", 0600); !written) {
            return written.error();
        }
    }
    // The volunteer's override: the saved copy when an earlier run left one, else the file as it is now.
    const bool saved = present(dir / kSavedOverrideFile);
    auto volunteer = readIfPresent(dir / (saved ? kSavedOverrideFile : kOverrideFile));
    if (!volunteer) {
        return volunteer.error();
    }
    auto nicer = withNicerSettings(*volunteer);
    if (!nicer) {
        return Error{"BOINC's preferences override " +
                     (dir / (saved ? kSavedOverrideFile : kOverrideFile)).string() + " cannot be read (" +
                     nicer.error().message +
                     "): fix it or delete it; nicer leaves it as it is and does not start the client, which "
                     "would otherwise suspend and throttle itself against nicer"};
    }
    if (!saved) {
        if (auto kept = writeFileAtomically(dir / kSavedOverrideFile, *volunteer); !kept) {
            return kept.error();
        }
    }
    return writeFileAtomically(dir / kOverrideFile, *nicer);
}

Result<void> rememberVolunteerOverride(const fs::path& dir, const std::string& volunteerOverride) {
    return writeFileAtomically(dir / kSavedOverrideFile, volunteerOverride);
}

Result<std::string> savedVolunteerOverride(const fs::path& dir) {
    return readIfPresent(dir / kSavedOverrideFile);
}

Result<void> restoreVolunteerOverride(const fs::path& dir) {
    if (!present(dir / kSavedOverrideFile)) {
        return {};
    }
    auto volunteer = readTextFile(dir / kSavedOverrideFile);
    if (!volunteer) {
        return volunteer.error();
    }
    std::error_code ec;
    if (volunteer->empty()) {
        fs::remove(dir / kOverrideFile, ec);
        if (ec) {
            return Error{"cannot remove nicer's override " + (dir / kOverrideFile).string() + ": " +
                         ec.message()};
        }
    } else if (auto written = writeFileAtomically(dir / kOverrideFile, *volunteer); !written) {
        return written.error();
    }
    fs::remove(dir / kSavedOverrideFile, ec);
    return {};
}

} // namespace nicer::boinc
