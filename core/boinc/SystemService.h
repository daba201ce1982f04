#pragma once

#include "libsystemd/Bus.h"
#include "util/Result.h"

#include <filesystem>
#include <string>

namespace nicer::boinc {

/// The system-wide BOINC client that Debian's boinc-client package installs and enables.
inline constexpr const char* kSystemServiceUnit = "boinc-client.service";

/**
 * Whether the system-wide BOINC client is enabled: a link to boinc-client.service in one of the .wants
 * folders of @p root/etc/systemd/system (what `systemctl enable` makes, and what `systemctl is-enabled`
 * reads). A file check, so it works without a system bus (containers, the hybrid test machines) and costs
 * nothing to repeat. @p root is for tests.
 */
bool systemServiceEnabled(const std::filesystem::path& root = "/");

/// What the system's systemd says of boinc-client.service (both empty where it knows no such unit).
struct SystemServiceState {
    std::string activeState;   ///< "active", "activating", "inactive", "failed", ...
    std::string unitFileState; ///< "enabled", "disabled", "masked", ...
};

/// Asks the system manager on @p systemBus for boinc-client.service's state: read-only properties, which
/// any user may read. An error when the system manager does not answer.
Result<SystemServiceState> querySystemService(sd_bus* systemBus);

/// What a system-wide client that is enabled (@p enabled) or running (@p running) means for nicer, and the
/// one command that hands BOINC to nicer; empty when it is neither.
std::string systemServiceAdvice(bool enabled, bool running);

/**
 * Looks for the system-wide client through the real system bus (a client started by hand is found too, and
 * a link in /lib rather than /etc), and through the .wants link where there is no system bus. The bus is
 * opened at the first look and again after it closed; each look is two property reads (1 s at most).
 */
class SystemServiceProbe {
public:
    explicit SystemServiceProbe(std::filesystem::path root = "/");
    /// The advice to show now (systemServiceAdvice), from the system bus or else the file check.
    std::string advice();
    /// Whether the last look reached the system manager (else it read the .wants links alone).
    bool usedSystemBus() const { return m_usedBus; }

private:
    std::filesystem::path m_root;
    libsystemd::BusPtr m_bus;
    bool m_usedBus = false;
};

} // namespace nicer::boinc
