#pragma once

// Replies recorded from the real BOINC 7.20.5 client, in tests/boinc/replies/: the bytes of one reply as it
// came over the socket, with or without the \003 that ends it.

#include "util/TextFile.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace nicer::test {

inline std::filesystem::path repliesDir() {
    return std::filesystem::path(__FILE__).parent_path() / "replies";
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
