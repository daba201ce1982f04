#pragma once

// The REAL HTTP/2 servers of the h2_servers CTest fixture (tests/harness/h2-servers.sh): their ports, the
// test CA and the document root, read from the DIR/env file the harness writes.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

namespace nicer::test {

/// What DIR/env says about the running test servers. All listen on 127.0.0.1; nginx's TLS port also on
/// [::1] when ipv6 is true. The certificate of "localhost" lists DNS:localhost, IP:127.0.0.1 and IP:::1.
struct H2Servers {
    std::filesystem::path dir;
    std::filesystem::path caFile; ///< the private CA that signed both server certificates (PEM)
    std::filesystem::path www; ///< document root: hello.txt, index.html, dir/nested.txt, 1k/64k/1m/16m.bin,
                               ///< SHA256SUMS
    std::string host;          ///< "localhost"
    std::string wrongName;     ///< the only name in the wrong-name certificate ("wrong.example")
    std::uint16_t nghttpdH2cPort = 0;       ///< nghttpd --no-tls (h2c, prior knowledge), --no-rfc7540-pri
    std::uint16_t nghttpdTlsPort = 0;       ///< nghttpd TLS, certificate for localhost, --no-rfc7540-pri
    std::uint16_t nghttpdWrongNamePort = 0; ///< nghttpd TLS, certificate for wrongName only
    std::uint16_t nginxTlsPort = 0;         ///< nginx `ssl http2`, certificate for localhost
    std::uint16_t nginxH2cPort = 0;         ///< nginx `http2` without TLS (h2c, prior knowledge)
    std::uint16_t nginxHttp1TlsPort = 0;    ///< nginx TLS without http2: refuses ALPN h2
    std::uint16_t closedPort = 0;           ///< nothing listens here
    bool ipv6 = false;                      ///< ::1 exists and nginx listens on it
    std::map<std::string, std::string> variables; ///< every H2_* assignment, unquoted

    /// Reads @p dir/env. Throws std::runtime_error saying how to start the servers when it is missing.
    static H2Servers load(const std::filesystem::path& dir
#ifdef NICER_H2_SERVERS_DIR
                          = NICER_H2_SERVERS_DIR
#endif
    ) {
        std::ifstream in(dir / "env");
        if (!in) {
            throw std::runtime_error(
                "the h2 test servers are not running (no " + (dir / "env").string() +
                "): run the tests through ctest, which starts the h2_servers fixture, or "
                "tests/harness/h2-servers.sh start " +
                dir.string());
        }
        H2Servers servers;
        servers.dir = dir;
        std::string line;
        while (std::getline(in, line)) {
            const auto equals = line.find('=');
            if (line.empty() || line[0] == '#' || equals == std::string::npos) {
                continue;
            }
            servers.variables[line.substr(0, equals)] = unquote(line.substr(equals + 1));
        }
        servers.caFile = servers.get("H2_CA_FILE");
        servers.www = servers.get("H2_WWW");
        servers.host = servers.get("H2_HOST");
        servers.wrongName = servers.get("H2_WRONG_NAME");
        servers.nghttpdH2cPort = servers.port("H2_NGHTTPD_H2C_PORT");
        servers.nghttpdTlsPort = servers.port("H2_NGHTTPD_TLS_PORT");
        servers.nghttpdWrongNamePort = servers.port("H2_NGHTTPD_WRONG_NAME_PORT");
        servers.nginxTlsPort = servers.port("H2_NGINX_TLS_PORT");
        servers.nginxH2cPort = servers.port("H2_NGINX_H2C_PORT");
        servers.nginxHttp1TlsPort = servers.port("H2_NGINX_HTTP1_TLS_PORT");
        servers.closedPort = servers.port("H2_CLOSED_PORT");
        servers.ipv6 = servers.get("H2_IPV6") == "1";
        return servers;
    }

    /// The servers of the build's fixture, read once for the whole test program.
    static const H2Servers& shared() {
        static const H2Servers loaded = load();
        return loaded;
    }

    /// nginx's quirks server (plain HTTP on 127.0.0.1).
    std::string quirksBase() const {
        return "http://127.0.0.1:" + get("H2_NGINX_QUIRKS_PORT");
    }

    /// The value of @p name; throws when DIR/env has no such line.
    const std::string& get(const std::string& name) const {
        const auto found = variables.find(name);
        if (found == variables.end()) {
            throw std::runtime_error(name + " is missing from " + (dir / "env").string() +
                                     "; restart the servers with tests/harness/h2-servers.sh");
        }
        return found->second;
    }

private:
    std::uint16_t port(const std::string& name) const {
        const unsigned long value = std::stoul(get(name));
        if (value == 0 || value > 65535) {
            throw std::runtime_error(name + " in " + (dir / "env").string() + " is no TCP port");
        }
        return static_cast<std::uint16_t>(value);
    }

    // The harness writes 'text' with ' as '\'' (sh quoting) or a bare word.
    static std::string unquote(const std::string& value) {
        std::string out;
        bool quoted = false;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const char c = value[i];
            if (c == '\'') {
                quoted = !quoted;
            } else if (c == '\\' && !quoted && i + 1 < value.size()) {
                out += value[++i];
            } else {
                out += c;
            }
        }
        return out;
    }
};

} // namespace nicer::test
