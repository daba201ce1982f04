#include "net/fetch/FetchReport.h"

namespace nicer::net {

std::string_view toString(FileState state) {
    switch (state) {
    case FileState::Checking:
        return "checking";
    case FileState::Queued:
        return "queued";
    case FileState::Waiting:
        return "waiting";
    case FileState::Active:
        return "active";
    case FileState::Ok:
        return "ok";
    case FileState::AlreadyPresent:
        return "already-present";
    case FileState::Failed:
        return "failed";
    case FileState::Cancelled:
        return "cancelled";
    }
    return "unknown";
}

bool isFinal(FileState state) {
    return state == FileState::Ok || state == FileState::AlreadyPresent || state == FileState::Failed ||
           state == FileState::Cancelled;
}

} // namespace nicer::net
