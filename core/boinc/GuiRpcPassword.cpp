#include "boinc/GuiRpcPassword.h"

#include "util/Text.h"
#include "util/TextFile.h"

namespace nicer::boinc {

Result<std::string> readGuiRpcPassword(const std::filesystem::path& path) {
    auto content = readTextFile(path);
    if (!content) {
        return Error{"cannot read BOINC's GUI RPC password: " + content.error().message +
                     " (the client writes gui_rpc_auth.cfg in its data directory when it first starts)"};
    }
    // client/gui_rpc_server.cpp reads one line (fgets) and strips its white space.
    const std::string_view text = *content;
    return std::string(text::trim(text.substr(0, text.find('\n'))));
}

} // namespace nicer::boinc
