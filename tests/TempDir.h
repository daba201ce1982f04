#pragma once

// A directory of its own under the temp dir, removed with the object.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace nicer::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix = "nicer-test") {
        std::string name = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        REQUIRE(mkdtemp(name.data()) != nullptr);
        path = name;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

} // namespace nicer::test
