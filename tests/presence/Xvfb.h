#pragma once

// A real X server for a test (Xvfb, on a display it picks itself), with or without access control, and
// input given to it through XTest as a person's would be (xdotool).

#include "Child.h"
#include "TempDir.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

namespace nicer::test {

class Xvfb {
public:
    /// With @p cookie, the server lets in only clients that show it (-auth with that one entry), and
    /// authorityFile() holds it.
    explicit Xvfb(bool cookie = false) {
        std::vector<std::string> argv{"/usr/bin/Xvfb", "-displayfd", "1",  "-screen", "0",
                                      "640x480x24",    "-nolisten",  "tcp"};
        if (cookie) {
            const std::string hex = randomHex();
            // xauth writes the file the server reads: the entry for any display of this host (wildcard
            // family as "xauth add" of a local display would, under its number, which is not known yet).
            REQUIRE(std::system(("/usr/bin/xauth -q -f " + authorityFile().string() + " add :" + "0 . " +
                                 hex + " >/dev/null 2>&1")
                                    .c_str()) == 0);
            argv.insert(argv.end(), {"-auth", authorityFile().string()});
            m_cookie = hex;
        }
        m_server.start(argv, m_dir.path / "xvfb.log");
        const std::string number = readLine(m_server.out());
        INFO("Xvfb did not start: install the xvfb package (packaging/dev.sh does); its log: "
             << (m_dir.path / "xvfb.log").string());
        REQUIRE_FALSE(number.empty());
        m_display = ":" + number;
        if (cookie && number != "0") {
            // The cookie under the display's real number, beside the one for :0.
            REQUIRE(std::system(("/usr/bin/xauth -q -f " + authorityFile().string() + " add " + m_display +
                                 " . " + m_cookie + " >/dev/null 2>&1")
                                    .c_str()) == 0);
        }
    }
    ~Xvfb() { m_server.stop(std::chrono::milliseconds(0)); }

    const std::string& display() const { return m_display; }
    std::filesystem::path authorityFile() const { return m_dir.path / "Xauthority"; }

    /// Moves the pointer, as a person's mouse would (XTest).
    void input() {
        m_x = m_x == 10 ? 20 : 10;
        const std::string auth = m_cookie.empty() ? "" : "XAUTHORITY=" + authorityFile().string() + " ";
        REQUIRE(std::system((auth + "DISPLAY=" + m_display + " /usr/bin/xdotool mousemove " +
                             std::to_string(m_x) + " " + std::to_string(m_x))
                                .c_str()) == 0);
    }

private:
    static std::string randomHex() {
        std::random_device random;
        std::string hex;
        for (int i = 0; i < 32; ++i) {
            hex += "0123456789abcdef"[random() % 16];
        }
        return hex;
    }

    TempDir m_dir;
    Child m_server;
    std::string m_display;
    std::string m_cookie;
    int m_x = 10;
};

} // namespace nicer::test
