#pragma once

#include <string>

namespace nicer::desktop {

/// The machine's power as nicerd's rules see it.
struct PowerState {
    bool onBattery = false;  ///< running from a battery now (UPower's OnBattery, or no power_supply "Mains"
                             ///< online while a battery discharges)
    double percent = -1.0;   ///< the display device's charge 0..100; -1: not known (no battery)
    bool powerSaver = false; ///< power-profiles-daemon's ActiveProfile is "power-saver"
    std::string source; ///< "UPower", the power_supply dir read instead (the fallback, whatever dir it is),
                        ///< or "" (nothing known: a desktop without battery info)
    bool operator==(const PowerState&) const = default;
};

} // namespace nicer::desktop
