#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace nicer::test {

/// A fresh directory standing in for PATH, with the programs (shell scripts) and plain files a test puts in.
class FakeBinDir {
public:
    FakeBinDir() {
        static int counter = 0;
        m_dir = std::filesystem::temp_directory_path() /
                ("nicer-bin-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    ~FakeBinDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    FakeBinDir(const FakeBinDir&) = delete;
    FakeBinDir& operator=(const FakeBinDir&) = delete;

    /// Writes @p name holding @p content, executable unless @p executable is false; returns its path.
    std::filesystem::path add(const std::string& name, const std::string& content = "#!/bin/sh\nexit 0\n",
                              bool executable = true) const {
        namespace fs = std::filesystem;
        const auto path = m_dir / name;
        std::ofstream(path) << content;
        fs::permissions(path, executable
                                  ? fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec
                                  : fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
        return path;
    }

    const std::filesystem::path& dir() const { return m_dir; }
    /// A PATH whose first entry does not exist and whose second is empty, so that the search has to go on.
    std::string pathVariable() const { return "/nonexistent/nicer-bin::" + m_dir.string(); }

private:
    std::filesystem::path m_dir;
};

} // namespace nicer::test
