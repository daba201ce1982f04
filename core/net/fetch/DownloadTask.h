#pragma once

#include "net/fetch/Backoff.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/PartFile.h"
#include "net/fetch/Sha256.h"
#include "net/fetch/Url.h"
#include "util/UniqueFd.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nicer::net {

class FetcherConnection;

/// What a failed attempt means for the file.
enum class AttemptFailure {
    Retry,      ///< try this mirror again after a backoff (or Retry-After), counting the attempt
    Discard,    ///< like Retry, but the part file is not a prefix of the file: delete it first
    NextMirror, ///< this mirror will not serve it: go on to the next one now
    Local,      ///< a local problem (disk, permissions): give the file up, no server can help
    Redirect,   ///< the server sent us elsewhere (Failure::location): ask there at once, no attempt counted
};

/// The Fetcher's working state for one file of the manifest. Plain data; the Fetcher drives it.
struct DownloadTask {
    /// What the current response allows.
    enum class Mode {
        AwaitingHeaders, ///< request sent
        Writing,         ///< the body continues the part file
        Verify,          ///< 416 for a part file that is already whole: check it when the stream is over
        Failing,         ///< the attempt failed (failure says how); the stream is being reset
    };

    struct Failure {
        Failure(AttemptFailure failureKind, std::string why,
                std::optional<std::chrono::seconds> after = std::nullopt,
                std::optional<Url> to = std::nullopt)
            : kind(failureKind)
            , reason(std::move(why))
            , retryAfter(after)
            , location(std::move(to)) {}

        AttemptFailure kind;
        std::string reason;
        std::optional<std::chrono::seconds> retryAfter;
        std::optional<Url> location; ///< Redirect: where to ask next
    };

    DownloadTask(std::size_t position, MetalinkFile manifestFile, std::vector<Url> urls, Backoff retryBackoff)
        : index(position)
        , file(std::move(manifestFile))
        , mirrors(std::move(urls))
        , backoff(std::move(retryBackoff)) {}

    /// The size to expect: the manifest's, else what the server said in this run.
    std::optional<std::uint64_t> expectedSize() const { return file.size ? file.size : serverSize; }
    /// Bytes still to fetch, for SRPT; nullopt when the size is unknown.
    std::optional<std::uint64_t> remaining() const {
        const auto size = expectedSize();
        return size ? std::optional<std::uint64_t>(*size > offset ? *size - offset : 0) : std::nullopt;
    }
    /// Where the next request goes: the mirror's URL, or where it redirected to.
    const Url& url() const { return redirect ? *redirect : mirrors[mirror]; }

    std::size_t index;
    MetalinkFile file;
    std::vector<Url> mirrors;
    std::size_t mirror = 0;
    /// The current mirror's redirect target and how many redirects led there. Every failed attempt starts
    /// again from the mirror's own URL: a redirector may pick another target next time.
    std::optional<Url> redirect;
    int redirects = 0;
    int attemptsOnMirror = 0;
    int freeRetriesInARow = 0;
    Backoff backoff;
    std::chrono::steady_clock::time_point readyAt;
    bool requested = false; ///< a request went out in this run (resumedFrom is set then)

    /// SHA-256 of the part file's bytes so far; the part file holds exactly `offset` bytes.
    Sha256 hash;
    std::uint64_t offset = 0;
    std::optional<std::uint64_t> serverSize;
    /// Open while an attempt runs, or while the inspection hashes it.
    std::optional<PartFile> part;

    /// Hashing what an earlier run left (Fetcher::inspectSome), a piece at a time.
    struct Inspection {
        bool final = false; ///< the finished file NAME (opened as finalFile), else NAME.part
        UniqueFd finalFile;
        std::uint64_t size = 0; ///< bytes to hash
        std::uint64_t done = 0; ///< bytes hashed so far
        Sha256 hash;
    };
    std::optional<Inspection> inspection;

    // The attempt in progress.
    FetcherConnection* connection = nullptr;
    std::int32_t stream = 0;
    Mode mode = Mode::AwaitingHeaders;
    std::optional<std::uint64_t> bodyEnd; ///< the offset the body must end at, when announced
    std::optional<Failure> failure;
    std::uint64_t attemptReceived = 0;
    std::uint64_t attemptConsumed = 0;
};

} // namespace nicer::net
