#pragma once

#include "usermanager/UnitManager.h"
#include "util/Result.h"

#include <string>

namespace nicer::daemon {

/**
 * The unit nicerd runs in, which the work is bound to (BindsTo=), so that the work never outlives nicerd:
 * its service (nicerd.service) when it is that service's main process, else a scope of its own made now on
 * @p units (a terminal, a test), which ends when nicerd's process does, however it ends.
 */
Result<std::string> ownUnit(usermanager::UnitManager& units);

} // namespace nicer::daemon
