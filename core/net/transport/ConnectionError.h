#pragma once

#include "util/Result.h"

namespace nicer::net {

/// Why a connection failed, and whether trying the same server again later could help.
struct ConnectionError {
    Error error;
    /// The server cannot be used as it is: its certificate fails verification, or it does not offer
    /// HTTP/2 (ALPN). Waiting and retrying will not change that; another mirror might.
    bool permanent = false;
};

} // namespace nicer::net
