#pragma once

#include "libsystemd/Connection.h"
#include "util/Result.h"

#include <filesystem>
#include <functional>
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

/// boinc-client.service's state from the reply to Properties.GetAll of org.freedesktop.systemd1.Unit on its
/// object (read-only properties, which any user may read); both fields empty where systemd has no such unit.
Result<SystemServiceState> readSystemServiceState(sd_bus_message* getAllReply);

/// What a system-wide client that is enabled (@p enabled) or running (@p running) means for nicer, and the
/// one command that hands BOINC to nicer; empty when it is neither.
std::string systemServiceAdvice(bool enabled, bool running);

/**
 * Looks for the system-wide client through the real system bus (a client started by hand is found too, and
 * a link in /lib rather than /etc), and through the .wants link where there is no system bus. Never blocks
 * the loop it runs on: the system manager is asked asynchronously (one GetAll, answered within a second or
 * given up), so a hung system bus delays nothing. The bus is opened at the first look and again after it
 * closed.
 */
class SystemServiceProbe {
public:
    /// The advice to show now (systemServiceAdvice); empty when there is none.
    using Done = std::function<void(std::string advice)>;

    /// On @p event, nicerd's loop; @p root is for tests (the .wants links are read under it).
    explicit SystemServiceProbe(sd_event* event, std::filesystem::path root = "/");
    ~SystemServiceProbe();
    SystemServiceProbe(const SystemServiceProbe&) = delete;
    SystemServiceProbe& operator=(const SystemServiceProbe&) = delete;

    /// Looks again; @p done is called from the loop once the system manager answered or failed to, or at
    /// once from the file check where there is no system bus. A look still under way is left to finish:
    /// this one is dropped, and @p done not called.
    void look(Done done);
    /// Whether the last look reached the system manager (else it read the .wants links alone).
    bool usedSystemBus() const { return m_usedBus; }

private:
    /// Sends the look's GetAll; sd-bus's reason when it cannot.
    Result<void> ask();
    void onReply(sd_bus_message* reply);
    void finish(const Result<SystemServiceState>& state);

    libsystemd::Connection m_bus; ///< the system bus, opened at the first look and again after it closed
    std::filesystem::path m_root;
    libsystemd::BusSlot m_call; ///< the look under way
    Done m_done;
    bool m_usedBus = false;
};

} // namespace nicer::boinc
