#pragma once

// Reads the access logs that tests/harness/h2-servers.sh has nginx write in the `nicer_fetch` format:
// $connection $connection_requests "$request_uri" "$http_range" $status $body_bytes_sent

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nicer::test {

struct NginxLogEntry {
    std::uint64_t connection = 0; ///< nginx's serial number of the TCP connection
    std::uint64_t request = 0;    ///< the request's number on its connection, from 1
    std::string uri;
    std::string range; ///< "" when the request had no Range header
    int status = 0;
    std::uint64_t bytesSent = 0; ///< body bytes nginx sent
};

/// The entries of @p log whose URI starts with @p uriPrefix, in the order nginx logged them (when each
/// request ended).
inline std::vector<NginxLogEntry> readNginxLog(const std::filesystem::path& log,
                                               const std::string& uriPrefix) {
    std::vector<NginxLogEntry> entries;
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        NginxLogEntry entry;
        std::string uri, range;
        fields >> entry.connection >> entry.request >> uri >> range >> entry.status >> entry.bytesSent;
        if (!fields || uri.size() < 2 || range.size() < 2) {
            continue;
        }
        entry.uri = uri.substr(1, uri.size() - 2);
        entry.range = range.substr(1, range.size() - 2);
        if (entry.range == "-") {
            entry.range.clear();
        }
        if (entry.uri.starts_with(uriPrefix)) {
            entries.push_back(std::move(entry));
        }
    }
    return entries;
}

} // namespace nicer::test
