#pragma once

#include <string>

namespace nicer::cli {

/// @p bytes for people: "512 B", "1.5 MiB" (1024-based, one decimal above bytes).
std::string humanBytes(double bytes);

} // namespace nicer::cli
