#pragma once

// The configuration of a private session bus (dbus-daemon --config-file) for one test: it listens in
// @p dir only (on a socket it names, or on @p listen, an address in @p dir), has no service directories (so
// nothing, nicerd least of all, is activated on it) and lets the test own and call anything. Used by the
// sd-bus tests (tests/dbus) and the Qt ones (tests/tray); with @p type "system", the system bus the daemons
// of tests/desktop take it for.

#include <string>

namespace nicer::test {

inline std::string privateBusConfig(const std::string& dir, const std::string& listen = {},
                                    const std::string& type = "session") {
    return R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>)" +
           type + R"(</type>
  <listen>)" +
           (listen.empty() ? "unix:dir=" + dir : listen) + R"(</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
)";
}

} // namespace nicer::test
