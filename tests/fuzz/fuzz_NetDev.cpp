// /proc/net/dev: parseNetDev on any text; what parses has names the file could hold and reads back the same.

#include "FuzzSupport.h"
#include "kernel/InterfaceTraffic.h"
#include "util/Text.h"

#include <set>
#include <string>

using namespace nicer;

namespace {

std::string format(const std::vector<kernel::InterfaceTraffic>& interfaces) {
    std::string text =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
        "drop fifo colls carrier compressed\n";
    for (const auto& entry : interfaces) {
        text += entry.name + ": " + std::to_string(entry.receivedBytes) + " 1 2 3 4 5 6 7 " +
                std::to_string(entry.sentBytes) + " 9 10 11 12 13 14 15\n";
    }
    return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parsed = kernel::parseNetDev(fuzz::asText(data, size));
    if (!parsed) {
        return 0;
    }
    std::set<std::string> names;
    std::uint64_t all = 0;
    std::uint64_t loopback = 0;
    for (const auto& entry : *parsed) {
        FUZZ_CHECK(!entry.name.empty());
        FUZZ_CHECK(text::trim(entry.name) == entry.name);
        FUZZ_CHECK(entry.name.find_first_of(":|\n") == std::string::npos);
        FUZZ_CHECK(names.insert(entry.name).second);
        all += entry.receivedBytes;
        loopback += entry.name == "lo" ? entry.receivedBytes : 0;
    }
    FUZZ_CHECK(kernel::totalReceivedBytes(*parsed, kernel::Loopback::Include) == all);
    FUZZ_CHECK(kernel::totalReceivedBytes(*parsed, kernel::Loopback::Exclude) == all - loopback);
    const auto again = kernel::parseNetDev(format(*parsed));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(*again == *parsed);
    return 0;
}
