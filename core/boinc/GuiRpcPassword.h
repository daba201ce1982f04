#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string>

namespace nicer::boinc {

/// The GUI RPC password from @p path (gui_rpc_auth.cfg in the client's data directory, which the client
/// writes with a random password the first time it starts). Like the client, it takes the first line
/// without surrounding white space. An empty password is returned as it is: the client then lets any local
/// program in. Fails, naming the file, when it is missing or unreadable.
Result<std::string> readGuiRpcPassword(const std::filesystem::path& path);

} // namespace nicer::boinc
