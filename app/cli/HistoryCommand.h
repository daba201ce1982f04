#pragma once

namespace nicer::cli {

/// `nicer history`: nicerd's recent periods (GetHistory) as a CSV trace that `nicer simulate` replays.
int runHistory();

} // namespace nicer::cli
