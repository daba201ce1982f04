#include "kernel/MemInfo.h"

#include "util/Text.h"
#include "util/TextFile.h"

#include <string>
#include <unistd.h>

namespace nicer::kernel {

Result<std::uint64_t> parseMeminfoBytes(std::string_view meminfo, std::string_view field) {
    for (auto line : text::split(meminfo, '\n')) {
        if (!line.starts_with(field) || line.size() <= field.size() || line[field.size()] != ':') {
            continue;
        }
        // "MemTotal:       16318412 kB"
        auto value = text::trim(line.substr(field.size() + 1));
        std::uint64_t kib = 0;
        if (!value.ends_with("kB") ||
            !text::parseNumber(text::trim(value.substr(0, value.size() - 2)), kib)) {
            return Error{std::string(field) + " is not '<number> kB': '" + std::string(line) + "'"};
        }
        return kib * 1024;
    }
    return Error{"no " + std::string(field) + " line"};
}

Result<std::uint64_t> parseMemTotal(std::string_view meminfo) {
    auto total = parseMeminfoBytes(meminfo, "MemTotal");
    if (total && *total == 0) {
        return Error{"MemTotal is 0"};
    }
    return total;
}

Result<std::uint64_t> machineMemoryBytes(const std::filesystem::path& meminfo) {
    auto text = readTextFile(meminfo);
    if (text) {
        if (auto total = parseMemTotal(*text); total) {
            return total;
        } else {
            return Error{meminfo.string() + ": " + total.error().message};
        }
    }
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0) {
        return Error{"cannot tell the machine's memory size: " + text.error().message +
                     ", and sysconf knows no physical pages"};
    }
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
}

Result<std::uint64_t> swapBytes(const std::filesystem::path& meminfo) {
    auto figures = readMemoryFigures(meminfo);
    return figures ? Result<std::uint64_t>(figures->swap) : Result<std::uint64_t>(figures.error());
}

Result<MemoryFigures> readMemoryFigures(const std::filesystem::path& meminfo) {
    auto text = readTextFile(meminfo);
    if (!text) {
        return text.error();
    }
    MemoryFigures figures;
    for (auto [field, into] :
         {std::pair{"MemTotal", &figures.total}, std::pair{"MemAvailable", &figures.available},
          std::pair{"SwapTotal", &figures.swap}}) {
        auto bytes = parseMeminfoBytes(*text, field);
        if (!bytes) {
            return Error{meminfo.string() + ": " + bytes.error().message};
        }
        *into = *bytes;
    }
    return figures;
}

} // namespace nicer::kernel
