#pragma once

#include <filesystem>
#include <string>

namespace nicer::boinc {

/// The system-wide BOINC client that Debian's boinc-client package installs and enables.
inline constexpr const char* kSystemServiceUnit = "boinc-client.service";

/**
 * Whether the system-wide BOINC client is enabled: a link to boinc-client.service in one of the .wants
 * folders of @p root/etc/systemd/system (what `systemctl enable` makes, and what `systemctl is-enabled`
 * reads). A file check rather than a question to the system's systemd, so it works without a system bus
 * (containers, these test machines) and costs nothing to repeat. @p root is for tests.
 */
bool systemServiceEnabled(const std::filesystem::path& root = "/");

/// What an enabled system service means for nicer, and the one command that hands BOINC to nicer.
std::string systemServiceAdvice();

} // namespace nicer::boinc
