#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string>

namespace nicer {

/// The whole content of the file at @p path (read with plain read(2), so /proc and cgroup files work); the
/// error names the file and says whether it could not be opened or not be read.
Result<std::string> readTextFile(const std::filesystem::path& path);

} // namespace nicer
