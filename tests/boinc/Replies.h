#pragma once

// Replies recorded from the real BOINC 7.20.5 client, in tests/boinc/replies/: the bytes of one reply as it
// came over the socket, with or without the \003 that ends it.

#include "util/TextFile.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace nicer::test {

/// tests/boinc/replies, found from the tests' data folder (tests/data, NICER_TEST_DATA), an absolute path:
/// __FILE__ is not one under the release flags' -ffile-prefix-map.
inline std::filesystem::path repliesDir() {
    return std::filesystem::path(NICER_TEST_DATA).parent_path() / "boinc" / "replies";
}

/// The reply in tests/boinc/replies/@p name, without its \003.
inline std::string recordedReply(std::string_view name) {
    auto text = readTextFile(repliesDir() / name);
    INFO(name);
    REQUIRE(text.ok());
    std::string reply = std::move(*text);
    if (!reply.empty() && reply.back() == '\003') {
        reply.pop_back();
    }
    return reply;
}

/// @p content wrapped as the client wraps every reply.
inline std::string wrapReply(std::string_view content) {
    return "<boinc_gui_rpc_reply>\n" + std::string(content) + "\n</boinc_gui_rpc_reply>\n";
}

} // namespace nicer::test
