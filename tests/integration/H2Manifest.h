#pragma once

// Metalink manifests over the files the REAL h2 test servers serve (tests/harness/h2-servers.sh), for the
// tests of nicerd's downloads.

#include "net/H2Servers.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nicer::test {

/// One <file> of a manifest.
struct ManifestEntry {
    std::string name;
    std::uint64_t size = 0;
    std::string sha256;
    std::string url;
};

/// The document root's SHA256SUMS: file name -> digest.
inline std::map<std::string, std::string> readSha256Sums(const std::filesystem::path& www) {
    std::ifstream in(www / "SHA256SUMS");
    if (!in) {
        throw std::runtime_error("no SHA256SUMS in " + www.string() + ": restart the h2 test servers");
    }
    std::map<std::string, std::string> sums;
    std::string digest, name;
    while (in >> digest >> name) {
        sums[name] = digest;
    }
    return sums;
}

/// The served file @p name (a path under the document root) as a manifest entry at @p baseUrl + name, with
/// its size and its digest from SHA256SUMS.
inline ManifestEntry servedFile(const H2Servers& servers, const std::string& name,
                                const std::string& baseUrl) {
    const auto sums = readSha256Sums(servers.www);
    const auto found = sums.find(name);
    if (found == sums.end()) {
        throw std::runtime_error(name + " is not in " + (servers.www / "SHA256SUMS").string());
    }
    return {name, std::filesystem::file_size(servers.www / name), found->second, baseUrl + name};
}

/// Writes a Metalink 4 manifest listing @p entries to @p path.
inline void writeMetalink(const std::filesystem::path& path, const std::vector<ManifestEntry>& entries) {
    std::ostringstream xml;
    xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n";
    for (const auto& e : entries) {
        xml << "  <file name=\"" << e.name << "\">\n"
            << "    <size>" << e.size << "</size>\n"
            << "    <hash type=\"sha-256\">" << e.sha256 << "</hash>\n"
            << "    <url>" << e.url << "</url>\n"
            << "  </file>\n";
    }
    xml << "</metalink>\n";
    std::ofstream(path) << xml.str();
}

/// https://localhost:PORT/ of nghttpd with TLS (the test CA signed its certificate).
inline std::string nghttpdTlsBase(const H2Servers& servers) {
    return "https://" + servers.host + ":" + std::to_string(servers.nghttpdTlsPort) + "/";
}

/// http://127.0.0.1:PORT/ of nghttpd without TLS (h2c with prior knowledge).
inline std::string nghttpdH2cBase(const H2Servers& servers) {
    return "http://127.0.0.1:" + std::to_string(servers.nghttpdH2cPort) + "/";
}

} // namespace nicer::test
