#pragma once

#include "tray/TrayState.h"

#include <QColor>
#include <QIcon>

namespace nicer::tray {

/// The tray icon for a state, drawn at every size a panel may ask for: a disc in the state's colour with a
/// glyph, so the state reads without colour too (colour-blind users, monochrome panels).
QIcon stateIcon(TrayState state);

/// The state's colour, shared with the window's status line.
QColor stateColor(TrayState state);

} // namespace nicer::tray
