#pragma once

#include "api/Keywords.h"

#include <array>
#include <optional>
#include <string_view>

namespace nicer::api {

/**
 * Where the work runs, which decides whom the kernel makes it yield to at once (cpu.idle 1 is idle only
 * among its siblings):
 * - RootSlice: the system manager's nicer.slice, directly under the root cgroup (the .deb's system part):
 * every program on the machine, wherever it runs.
 * - UserSlice: nicer.slice in the user manager: only what runs inside the user manager. A desktop kept in a
 *   login session (Cinnamon, XFCE, MATE, LXQt, i3 or sway from a display manager), system services,
 *   containers and other users meet the work at equal weight, and only nicer's quota protects them.
 */
enum class Placement { UserSlice, RootSlice };

/// "user-slice", "root-slice": the values of nicerd's --placement, the bus and `nicer status --json`.
inline constexpr std::array<std::string_view, 2> kPlacementKeywords = {"user-slice", "root-slice"};

constexpr std::string_view placementName(Placement p) {
    return keywordIn(kPlacementKeywords, p);
}
/// The placement for its keyword; nullopt for an unknown one.
constexpr std::optional<Placement> parsePlacement(std::string_view name) {
    return valueIn<Placement>(kPlacementKeywords, name);
}

/// On the bus, a placement a client does not know (a newer nicerd's) reads as the user slice: the one that
/// promises least.
template <>
struct BusKeywords<Placement> {
    static constexpr const auto& keywords = kPlacementKeywords;
    static constexpr Placement unknown = Placement::UserSlice;
};
/// What it means for the volunteer, in the words `nicer status` and the tray use.
constexpr std::string_view placementSummary(Placement p) {
    return p == Placement::RootSlice ? "protected everywhere: the work yields to every program on the machine"
                                     : "protected inside your user session only";
}

} // namespace nicer::api
