#include "daemon/BoincArguments.h"

namespace nicer::daemon {

namespace {

/// A URL or account key for BOINC: present, of printable characters without blanks, and short enough for
/// the client's buffers (256 bytes with its end).
Result<void> checkArgument(const char* what, const std::string& value) {
    if (value.empty()) {
        return Error{std::string("the ") + what + " is empty"};
    }
    if (value.size() > 255) {
        return Error{std::string("the ") + what + " is longer than BOINC takes (255 characters)"};
    }
    for (const unsigned char c : value) {
        if (c <= ' ' || c == 0x7f) {
            return Error{std::string("the ") + what + " holds a blank or a control character"};
        }
    }
    return {};
}

/// A user name or password: any text but control characters. A \003 would end the GUI RPC request early, and
/// the client would read the rest as a request of its own, answering once more than asked.
Result<void> checkText(const char* what, const std::string& value) {
    for (const unsigned char c : value) {
        if (c < ' ' || c == 0x7f) {
            return Error{std::string("the ") + what + " holds a control character"};
        }
    }
    return {};
}

} // namespace

Result<void> checkBoincProjectUrl(const std::string& url) {
    if (auto ok = checkArgument("project URL", url); !ok) {
        return ok;
    }
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
        return Error{"the project URL '" + url + "' must start with http:// or https://"};
    }
    return {};
}

Result<void> checkBoincAttach(const std::string& url, const std::string& key) {
    if (auto ok = checkBoincProjectUrl(url); !ok) {
        return ok;
    }
    return checkArgument("account key", key);
}

Result<void> checkBoincAccountManager(const std::string& url, const std::string& name,
                                      const std::string& password) {
    if (auto ok = checkBoincProjectUrl(url); !ok) {
        return Error{"account manager: " + ok.error().message};
    }
    if (name.empty() || name.size() > 255) {
        return Error{"the account manager's user name must hold 1 to 255 characters"};
    }
    if (auto ok = checkText("account manager's user name", name); !ok) {
        return ok;
    }
    return checkText("account manager's password", password);
}

} // namespace nicer::daemon
