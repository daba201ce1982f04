// The GUI RPC byte stream (boinc/GuiRpcProtocol): the ReplyBuffer that cuts the client's bytes into replies,
// fed in chunks the input chooses, against a model of what it must do: every complete reply comes out once,
// in order, without its \003; a reply (complete or under way) longer than the limit fails the stream and
// clears it; size() counts what is held. Also xmlEscape (no markup survives, and XML reads the value back)
// and requestName.

#include "FuzzSupport.h"
#include "boinc/GuiRpcProtocol.h"

#include <pugixml.hpp>

#include <deque>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>

using namespace nicer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::size_t limit = input.ConsumeIntegralInRange<std::size_t>(0, 1024);
    boinc::ReplyBuffer buffer(limit);
    FUZZ_CHECK(buffer.limit() == limit && buffer.empty());

    std::deque<std::string> complete; // the model: replies not yet taken, and the one under way
    std::string pending;
    while (input.remaining_bytes() > 0) {
        const int action = input.ConsumeIntegralInRange(0, 3);
        if (action == 0) {
            const auto reply = buffer.next();
            if (complete.empty()) {
                FUZZ_CHECK(!reply);
            } else {
                FUZZ_CHECK(reply && *reply == complete.front());
                complete.pop_front();
            }
        } else if (action == 1 && input.ConsumeBool()) {
            buffer.clear();
            complete.clear();
            pending.clear();
        } else {
            const std::string bytes = input.ConsumeRandomLengthString(96);
            bool tooLarge = false;
            std::deque<std::string> added;
            std::string under = pending;
            for (const char c : bytes) {
                if (c == boinc::kEndOfMessage) {
                    tooLarge = tooLarge || under.size() > limit;
                    added.push_back(std::move(under));
                    under.clear();
                } else {
                    under += c;
                }
            }
            tooLarge = tooLarge || under.size() > limit;
            const auto appended = buffer.append(bytes);
            FUZZ_CHECK(appended.ok() == !tooLarge);
            if (tooLarge) {
                complete.clear();
                pending.clear();
                FUZZ_CHECK(buffer.empty());
            } else {
                complete.insert(complete.end(), added.begin(), added.end());
                pending = std::move(under);
            }
        }
        std::size_t held = pending.size();
        for (const auto& reply : complete) {
            held += reply.size() + 1;
        }
        FUZZ_CHECK(buffer.size() == held);
        FUZZ_CHECK(buffer.empty() == (held == 0));
    }

    const std::string value = input.ConsumeRemainingBytesAsString();
    const std::string escaped = boinc::xmlEscape(value);
    FUZZ_CHECK(escaped.find_first_of("<>\"'") == std::string::npos);
    const std::string element = "<v>" + escaped + "</v>";
    pugi::xml_document document;
    if (value.find('\r') == std::string::npos &&
        document.load_buffer(element.data(), element.size(), pugi::parse_default | pugi::parse_ws_pcdata)) {
        FUZZ_CHECK(document.child("v").child_value() == std::string(value.c_str()));
    }
    const std::string name = boinc::requestName(value);
    FUZZ_CHECK(!name.empty());
    FUZZ_CHECK(name.find_first_of(" \t\r\n/>") == std::string::npos);
    return 0;
}
