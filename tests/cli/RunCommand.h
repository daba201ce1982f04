#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nicer::test {

#ifdef NICER_CLI
/// The nicer program of this build.
inline const std::string kNicer = NICER_CLI;
#endif

struct CommandResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

inline std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs @p command through /bin/sh and captures its exit status, stdout and stderr.
inline CommandResult runCommand(const std::string& command) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto tag = std::to_string(::getpid());
    const auto outPath = dir / ("nicer-test-" + tag + ".out");
    const auto errPath = dir / ("nicer-test-" + tag + ".err");
    const int status = std::system((command + " >" + outPath.string() + " 2>" + errPath.string()).c_str());
    CommandResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(outPath);
    r.err = readFile(errPath);
    std::filesystem::remove(outPath);
    std::filesystem::remove(errPath);
    return r;
}

/// A command's CSV output, a row of fields per line (no quoting: what nicer's commands print); an empty last
/// field is a field too.
inline std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> fields;
        std::size_t start = 0;
        for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1) {
            fields.push_back(line.substr(start, comma - start));
        }
        fields.push_back(line.substr(start));
        rows.push_back(fields);
    }
    return rows;
}

} // namespace nicer::test
