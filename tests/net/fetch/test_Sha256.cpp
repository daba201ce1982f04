#include "net/fetch/Sha256.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace nicer::net;

namespace {

// FIPS 180-2 / NIST test vectors.
constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbcSha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* kTwoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
constexpr const char* kTwoBlocksDigest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* kMillionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

std::string digestOf(std::string_view text) {
    Sha256 sha;
    sha.update(text.data(), text.size());
    return sha.hexDigest();
}

} // namespace

TEST_CASE("Sha256 gives the NIST digests", "[Sha256]") {
    CHECK(digestOf("") == kEmpty);
    CHECK(digestOf("abc") == kAbcSha256);
    CHECK(digestOf(kTwoBlocks) == kTwoBlocksDigest);
    CHECK(digestOf(std::string(1'000'000, 'a')) == kMillionA);
}

TEST_CASE("Sha256 gives the same digest however the input is split", "[Sha256]") {
    const std::string message = kTwoBlocks;
    for (std::size_t cut = 0; cut <= message.size(); ++cut) {
        Sha256 sha;
        sha.update(message.data(), cut);
        sha.update(message.data() + cut, message.size() - cut);
        INFO("cut at " << cut);
        CHECK(sha.hexDigest() == kTwoBlocksDigest);
    }

    // A million 'a' fed in uneven pieces through the span overload.
    const std::vector<std::byte> chunk(999, std::byte{'a'});
    Sha256 sha;
    std::size_t fed = 0;
    while (fed < 1'000'000) {
        const auto n = std::min(chunk.size(), std::size_t{1'000'000} - fed);
        sha.update(std::span<const std::byte>(chunk.data(), n));
        fed += n;
    }
    CHECK(sha.hexDigest() == kMillionA);
}

TEST_CASE("Sha256::hexDigestSoFar reads the prefix and lets hashing continue", "[Sha256]") {
    Sha256 sha;
    CHECK(sha.hexDigestSoFar() == kEmpty);
    sha.update("ab", 2);
    CHECK(sha.hexDigestSoFar() == digestOf("ab"));
    CHECK(sha.hexDigestSoFar() == digestOf("ab")); // reading twice changes nothing
    sha.update("c", 1);
    CHECK(sha.hexDigestSoFar() == kAbcSha256);
    CHECK(sha.hexDigest() == kAbcSha256);
}

TEST_CASE("Sha256::hexDigest starts over with an empty message", "[Sha256]") {
    Sha256 sha;
    sha.update("abc", 3);
    CHECK(sha.hexDigest() == kAbcSha256);
    CHECK(sha.hexDigestSoFar() == kEmpty);
    sha.update("abc", 3);
    CHECK(sha.hexDigest() == kAbcSha256);
    CHECK(sha.hexDigest() == kEmpty);
}

TEST_CASE("Sha256 can be moved with its state", "[Sha256]") {
    Sha256 first;
    first.update("a", 1);
    Sha256 second = std::move(first);
    second.update("bc", 2);
    CHECK(second.hexDigest() == kAbcSha256);

    Sha256 third;
    third.update("xyz", 3);
    third = std::move(second);
    third.update("abc", 3);
    CHECK(third.hexDigest() == kAbcSha256);
}

TEST_CASE("isSha256Hex wants exactly 64 hex digits", "[Sha256]") {
    CHECK(isSha256Hex(kAbcSha256));
    CHECK(isSha256Hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
    CHECK_FALSE(isSha256Hex(""));
    CHECK_FALSE(isSha256Hex(std::string(kAbcSha256).substr(1)));
    CHECK_FALSE(isSha256Hex(std::string(kAbcSha256) + "0"));
    CHECK_FALSE(isSha256Hex(std::string(63, 'a') + "g"));
    CHECK_FALSE(isSha256Hex(" " + std::string(kAbcSha256).substr(1)));
}
