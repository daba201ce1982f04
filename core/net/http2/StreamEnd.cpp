#include "net/http2/StreamEnd.h"

#include <nghttp2/nghttp2.h>

namespace nicer::net {

bool StreamEnd::retryable() const {
    return kind == Kind::NotProcessed || (kind == Kind::ResetByPeer && errorCode == NGHTTP2_REFUSED_STREAM);
}

std::string StreamEnd::describe() const {
    const std::string code = nghttp2_http2_strerror(errorCode);
    switch (kind) {
    case Kind::Complete:
        return "complete";
    case Kind::ResetByPeer:
        return "reset by the server (" + code + ")";
    case Kind::HeadersTooLarge:
        return "response headers too large, stream reset (" + code + ")";
    case Kind::Malformed:
        return "malformed response, stream reset (" + code + ")";
    case Kind::Cancelled:
        return "cancelled (" + code + ")";
    case Kind::NotProcessed:
        return "not processed by the server, safe to retry";
    case Kind::ConnectionClosed:
        return "connection closed before the response was complete (" + code + ")";
    }
    return "unknown end (" + code + ")";
}

} // namespace nicer::net
