#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace nicer::test {

/// A scratch directory that stands in for cgroup mounts (cpu.max, cgroup.freeze, cgroup.procs ...), with the
/// mountinfo lines that point CgroupLayout at it; removed again even when a test fails. Its name holds a
/// space, so that every user also checks that mountinfo's \040 escape reaches the file system as a space.
class FakeCgroupTree {
public:
    FakeCgroupTree() {
        static int counter = 0;
        m_root = std::filesystem::temp_directory_path() /
                 ("nicer cgroup test " + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        std::filesystem::remove_all(m_root);
        std::filesystem::create_directories(m_root);
    }
    ~FakeCgroupTree() {
        std::error_code ec;
        std::filesystem::remove_all(m_root, ec);
    }
    FakeCgroupTree(const FakeCgroupTree&) = delete;
    FakeCgroupTree& operator=(const FakeCgroupTree&) = delete;

    const std::filesystem::path& root() const { return m_root; }

    /// Writes @p text to root/relative, creating the directories on the way.
    void write(const std::string& relative, const std::string& text) const {
        const auto path = m_root / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }

    std::string read(const std::string& relative) const {
        std::ifstream in(m_root / relative);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }

    /// A mountinfo line for a mount of @p fsType at root/relative, escaped as the kernel does.
    std::string mountLine(const std::string& relative, const std::string& fsType,
                          const std::string& superOptions) const {
        std::string escaped;
        for (const char c : (m_root / relative).string()) {
            escaped += c == ' ' ? std::string("\\040") : std::string(1, c);
        }
        return "41 31 0:38 / " + escaped + " rw,relatime - " + fsType + " " + fsType + " " + superOptions +
               "\n";
    }

private:
    std::filesystem::path m_root;
};

} // namespace nicer::test
