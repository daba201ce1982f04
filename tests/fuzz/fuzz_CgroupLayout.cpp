// /proc/self/mountinfo: CgroupLayout::parse on any text. What parses names at least one hierarchy, each one
// the mount point of a line of that type, and the same layout reads back from a mountinfo written from it.

#include "FuzzSupport.h"
#include "kernel/CgroupLayout.h"

#include <optional>
#include <string>

using namespace nicer;

namespace {

/// @p path as mountinfo writes a mount point: space, tab, newline and backslash as \ooo.
std::string escaped(const std::filesystem::path& path) {
    std::string out;
    for (const char c : path.native()) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
            const auto byte = static_cast<unsigned char>(c);
            out += '\\';
            out += static_cast<char>('0' + (byte >> 6));
            out += static_cast<char>('0' + ((byte >> 3) & 7));
            out += static_cast<char>('0' + (byte & 7));
        } else {
            out += c;
        }
    }
    return out;
}

std::string mountLine(int id, const std::filesystem::path& at, const std::string& type,
                      const std::string& options) {
    return std::to_string(id) + " 1 0:" + std::to_string(id) + " / " + escaped(at) +
           " rw,nosuid shared:1 - " + type + " " + type + " " + options + "\n";
}

std::string format(const kernel::CgroupLayout& layout) {
    std::string text = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";
    if (layout.unifiedRoot()) {
        text += mountLine(30, *layout.unifiedRoot(), "cgroup2", "rw,nsdelegate");
    }
    if (layout.cpuRoot()) {
        text += mountLine(31, *layout.cpuRoot(), "cgroup", "rw,cpu");
    }
    if (layout.cpuacctRoot()) {
        text += mountLine(32, *layout.cpuacctRoot(), "cgroup", "rw,cpuacct");
    }
    if (layout.freezerRoot()) {
        text += mountLine(33, *layout.freezerRoot(), "cgroup", "rw,freezer");
    }
    return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input = fuzz::asText(data, size);
    const auto layout = kernel::CgroupLayout::parse(input);
    if (!layout) {
        return 0;
    }
    // Only a hierarchy that some line mounts is named, at a mount point that line holds.
    if (layout->unifiedRoot()) {
        FUZZ_CHECK(input.find("cgroup2") != std::string_view::npos);
        FUZZ_CHECK(!layout->unifiedRoot()->empty());
    }
    for (const auto* root : {&layout->cpuRoot(), &layout->cpuacctRoot(), &layout->freezerRoot()}) {
        if (*root) {
            FUZZ_CHECK(input.find("cgroup") != std::string_view::npos);
            FUZZ_CHECK(!(*root)->empty());
        }
    }
    // The cpu controller is on the v2 tree only when that tree is there and no v1 hierarchy holds it.
    if (layout->cpuOnUnified()) {
        FUZZ_CHECK(layout->unifiedRoot() && !layout->cpuRoot());
    }
    // name=systemd alone is not visible through the accessors: skip the round trip for that layout.
    if (!layout->unifiedRoot() && !layout->cpuRoot() && !layout->cpuacctRoot() && !layout->freezerRoot()) {
        return 0;
    }
    const auto again = kernel::CgroupLayout::parse(format(*layout));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->unifiedRoot() == layout->unifiedRoot());
    FUZZ_CHECK(again->cpuRoot() == layout->cpuRoot());
    FUZZ_CHECK(again->cpuacctRoot() == layout->cpuacctRoot());
    FUZZ_CHECK(again->freezerRoot() == layout->freezerRoot());
    FUZZ_CHECK(again->cpuOnUnified() == layout->cpuOnUnified());
    return 0;
}
