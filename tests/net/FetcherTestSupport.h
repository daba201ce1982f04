#pragma once

// Helpers of the fetcher's tests: temporary directories, random file contents, SHA-256 of bytes, an sd-event
// loop run with a generous safety limit, and a Fetcher run to the end.

#include "EventLoop.h"
#include "libsystemd/Event.h"
#include "libsystemd/Timer.h"
#include "net/fetch/Fetcher.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/Sha256.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace nicer::test {

/// A fresh directory (under /tmp unless @p parent is given), removed with everything in it.
class TempDir {
public:
    explicit TempDir(const std::filesystem::path& parent = std::filesystem::temp_directory_path(),
                     const std::string& prefix = "nicer-fetch") {
        std::string pattern = (parent / (prefix + "-XXXXXX")).string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        m_path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

inline std::string randomBytes(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; i += 8) {
        const std::uint64_t word = engine();
        for (std::size_t j = 0; j < 8 && i + j < size; ++j) {
            bytes[i + j] = static_cast<char>(word >> (8 * j));
        }
    }
    return bytes;
}

inline std::string sha256Of(const std::string& bytes) {
    net::Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    return hash.hexDigest();
}

inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

inline std::string readBytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Files put into a server's document root for one test, and the manifest entries that describe them.
class ServedFiles {
public:
    /// A directory of its own below @p www, so tests do not see each other's files.
    ServedFiles(const std::filesystem::path& www, const std::string& prefix)
        : m_dir(www, prefix)
        , m_urlPath("/" + m_dir.path().filename().string()) {}

    /// Adds a file of @p size random bytes named @p name; returns its content.
    const std::string& add(const std::string& name, std::size_t size, std::uint64_t seed) {
        m_names.push_back(name);
        m_contents.push_back(randomBytes(size, seed));
        writeFile(m_dir.path() / name, m_contents.back());
        return m_contents.back();
    }

    /// Manifest entries for every file, downloadable from each of @p bases in order (e.g.
    /// "http://127.0.0.1:1234"), with a prefix inserted in the path (e.g. "/norange").
    std::vector<net::MetalinkFile> manifest(const std::vector<std::string>& bases,
                                            const std::string& pathPrefix = "") const {
        std::vector<net::MetalinkFile> files;
        for (std::size_t i = 0; i < m_names.size(); ++i) {
            net::MetalinkFile file;
            file.name = m_names[i];
            file.size = m_contents[i].size();
            file.sha256 = sha256Of(m_contents[i]);
            int priority = 1;
            for (const auto& base : bases) {
                file.mirrors.push_back(net::Mirror{base + pathPrefix + urlPath(i), priority++});
            }
            files.push_back(std::move(file));
        }
        return files;
    }

    /// The URL path of file @p i, e.g. "/nicer-fetch-abc123/f1.bin".
    std::string urlPath(std::size_t i) const { return m_urlPath + "/" + m_names[i]; }
    const std::string& content(std::size_t i) const { return m_contents[i]; }
    const std::string& name(std::size_t i) const { return m_names[i]; }
    std::size_t size() const { return m_names.size(); }
    const std::filesystem::path& dir() const { return m_dir.path(); }

private:
    TempDir m_dir;
    std::string m_urlPath;
    std::vector<std::string> m_names;
    std::vector<std::string> m_contents;
};

/// Records the order in which files finish.
class FinishOrder : public net::FetchObserver {
public:
    void onFileDone(const net::FetchReport&, std::size_t index) override { order.push_back(index); }
    std::vector<std::size_t> order;
};

/// Runs a Fetcher over @p files into @p dir until it finishes (or a generous safety limit passes, which
/// fails the test) and returns its report.
inline net::FetchReport fetchAll(std::vector<net::MetalinkFile> files, const std::filesystem::path& dir,
                                 net::FetcherOptions options = {}, net::FetchObserver* observer = nullptr,
                                 std::chrono::seconds limit = std::chrono::seconds(120)) {
    const auto event = newLoop();
    auto fetcher = net::Fetcher::create(event.get(), std::move(files), dir, std::move(options), observer);
    if (!fetcher) {
        FAIL(fetcher.error().message);
    }
    const auto started = (*fetcher)->start();
    if (!started) {
        FAIL(started.error().message);
    }
    bool expired = false;
    auto timer = libsystemd::Timer::create(event.get(), [&expired] { expired = true; });
    REQUIRE(timer);
    timer->armIn(limit);
    while (!(*fetcher)->finished() && !expired) {
        REQUIRE(sd_event_run(event.get(), UINT64_MAX) >= 0);
    }
    REQUIRE((*fetcher)->finished());
    return (*fetcher)->report();
}

/// Options for tests: fast retries, a deterministic jitter.
inline net::FetcherOptions quickOptions() {
    net::FetcherOptions options;
    options.backoffBase = std::chrono::milliseconds(10);
    options.backoffCap = std::chrono::milliseconds(100);
    options.uniform01 = [] { return 0.5; };
    options.attemptsPerMirror = 3;
    options.stallTimeout = std::chrono::seconds(10);
    return options;
}

/// Every regular file below @p dir whose name ends with ".part".
inline std::vector<std::filesystem::path> partFiles(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> found;
    if (!std::filesystem::exists(dir)) {
        return found;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        if (entry.path().string().ends_with(".part")) {
            found.push_back(entry.path());
        }
    }
    return found;
}

} // namespace nicer::test
