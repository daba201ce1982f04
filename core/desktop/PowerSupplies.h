#pragma once

#include "desktop/PowerState.h"

#include <filesystem>
#include <string>

namespace nicer::desktop {

/**
 * The power state from the kernel's power_supply class in @p dir (/sys/class/power_supply, or a fake tree):
 * each supply's type (Mains, USB, Battery, ...), online, present, scope, status and capacity. On battery when
 * a battery discharges and no external supply is online. The percentage is the system batteries' (weighted by
 * their full energy where they all give it); a peripheral's battery (scope "Device", a mouse) is left out.
 * source is @p dir where it holds a power supply; otherwise source is "" and @p note says why (no such
 * directory, nothing like a power supply in it). @p note is empty when the directory gave a state. powerSaver
 * is never set here.
 */
PowerState readPowerSupplies(const std::filesystem::path& dir, std::string& note);

} // namespace nicer::desktop
