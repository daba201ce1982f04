#pragma once

// The arguments a client of nicerd (D-Bus) passes for BOINC's attach and detach, checked before they go into
// a GUI RPC request. Pure, so that they can be tested and fuzzed without a BOINC client.

#include "util/Result.h"

#include <string>

namespace nicer::daemon {

/// A project's master URL as BoincAttach and BoincDetach take it: http:// or https://, of printable
/// characters without blanks, and at most 255 bytes (the client's buffers hold 256 with their end).
Result<void> checkBoincProjectUrl(const std::string& url);

/// BoincAttach's project URL and account key; the key follows the URL's rules apart from the scheme.
Result<void> checkBoincAttach(const std::string& url, const std::string& key);

/// BoincAttachAccountManager's URL, user name (1 to 255 bytes) and password, neither with control characters;
/// the error starts with "account manager: " when it is the URL.
Result<void> checkBoincAccountManager(const std::string& url, const std::string& name,
                                      const std::string& password);

} // namespace nicer::daemon
