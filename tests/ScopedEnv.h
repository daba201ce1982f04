#pragma once

// An environment variable set for a scope (a test's private bus address, say) and put back as it was.

#include <cstdlib>
#include <optional>
#include <string>

namespace nicer::test {

class ScopedEnv {
public:
    ScopedEnv(std::string name, const std::string& value)
        : m_name(std::move(name)) {
        const char* old = std::getenv(m_name.c_str());
        m_old = old ? std::optional<std::string>(old) : std::nullopt;
        ::setenv(m_name.c_str(), value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (m_old) {
            ::setenv(m_name.c_str(), m_old->c_str(), 1);
        } else {
            ::unsetenv(m_name.c_str());
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

} // namespace nicer::test
