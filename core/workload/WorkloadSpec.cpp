#include "workload/WorkloadSpec.h"

#include <filesystem>
#include <unistd.h>

namespace nicer::workload {

WorkloadSpec demoWorkload(int cpuCount) {
    return WorkloadSpec{{"md5sum", "/dev/zero"}, cpuCount, true, "demo"};
}

Result<std::string> resolveExecutable(const std::string& command, const std::string& pathVariable) {
    namespace fs = std::filesystem;
    if (command.empty()) {
        return Error{"the workload command is empty", ErrorKind::InvalidInput};
    }
    const auto isExecutable = [](const fs::path& p) {
        std::error_code ec;
        return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
    };
    if (command.find('/') != std::string::npos) {
        const fs::path p = fs::absolute(command);
        if (!isExecutable(p)) {
            return Error{"the workload command " + p.string() + " is not an executable file",
                         ErrorKind::Unavailable};
        }
        return p.lexically_normal().string();
    }
    std::size_t start = 0;
    while (start <= pathVariable.size()) {
        const auto end = std::min(pathVariable.find(':', start), pathVariable.size());
        const std::string dir = pathVariable.substr(start, end - start);
        if (!dir.empty() && isExecutable(fs::path(dir) / command)) {
            return (fs::path(dir) / command).string();
        }
        start = end + 1;
    }
    return Error{"the workload command '" + command + "' is not in PATH (" + pathVariable +
                     "): install it or give its full path",
                 ErrorKind::Unavailable};
}

} // namespace nicer::workload
