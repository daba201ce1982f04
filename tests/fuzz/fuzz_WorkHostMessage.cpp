// The link between nicerd and its work host (workhost/WorkHostMessage): a packet as the other end sends it,
// decoded into a verb and fields and, for start, into a request. A packet decodes exactly when it begins with
// a verb's keyword; a decoded message encodes back to the same packet; a start request that parses names a
// leaf that stays inside the work's cgroup, has argv[0], and its message round-trips to the same request.

#include "FuzzSupport.h"
#include "workhost/WorkHostMessage.h"

#include <string>

using namespace nicer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto packet = fuzz::asText(data, size);
    auto message = workhost::decodeMessage(packet);
    // Decoded exactly when the packet starts with a verb's keyword, up to its first NUL.
    const auto verb = valueIn<workhost::Verb>(workhost::kVerbKeywords, packet.substr(0, packet.find('\0')));
    FUZZ_CHECK(message.ok() == verb.has_value());
    if (!message) {
        FUZZ_CHECK(!message.error().message.empty());
        return 0;
    }
    FUZZ_CHECK(message->verb == *verb);
    FUZZ_CHECK(workhost::encodeMessage(*message) == packet);
    if (message->verb != workhost::Verb::Start) {
        return 0;
    }
    auto request = workhost::parseStart(*message);
    if (!request) {
        FUZZ_CHECK(!request.error().message.empty());
        return 0;
    }
    FUZZ_CHECK(!request->name.empty() && request->name.find('/') == std::string::npos &&
               request->name.front() != '.');
    FUZZ_CHECK(!request->argv.empty());
    auto again = workhost::parseStart(workhost::startMessage(*request));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->name == request->name && again->nice == request->nice &&
               again->executable == request->executable &&
               again->workingDirectory == request->workingDirectory && again->argv == request->argv &&
               again->environment == request->environment);
    return 0;
}
