#pragma once

#include "net/fetch/Backoff.h"
#include "net/fetch/FetchReport.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/PartFile.h"
#include "net/fetch/Sha256.h"
#include "net/fetch/Url.h"
#include "net/http2/Http2Session.h"
#include "net/http2/StreamEnd.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
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

/**
 * One file of a fetch: its part file, hash and mirrors, the response and retry state machine of its attempts,
 * and its FetchFileReport, all in one place. It does no I/O on the network: the Fetcher submits the request
 * it builds, feeds it the response, and acts on the decision each call returns (reset the stream, pace or
 * discard the bytes, tell the observer the file is done). Time comes in as arguments.
 */
class FileDownload {
public:
    using Clock = std::chrono::steady_clock;

    /// What the Fetcher's options say about every file.
    struct Policy {
        std::filesystem::path dir;
        int attemptsPerMirror = 5;
        int freeRetries = 10;
    };

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

    /// After a response's header block.
    enum class AfterHeaders {
        Ignore, ///< not ours (no attempt awaits headers)
        Write,  ///< the body goes to the part file: the stream's window may need the current size
        Reset,  ///< reset the stream (the attempt failed, or a 416's body is of no use)
    };
    /// After a piece of the body.
    enum class AfterData {
        Pace,            ///< written: acknowledge it as the rate allows
        Discard,         ///< not kept: count it against the rate and acknowledge it at once
        ResetAndDiscard, ///< the attempt failed: reset the stream, and discard the bytes
        Reset,           ///< the attempt failed locally: reset the stream
    };
    /// After anything that may end the file.
    enum class Outcome {
        Continue, ///< queued, waiting or still running
        Done,     ///< reached a final state: tell the observer
    };

    /// How the connection of a closed stream ended, for the retry decision.
    struct ConnectionFacts {
        bool everConnected = true;
        bool failedPermanently = false;
        std::optional<std::string> error;
    };

    /// Counters that add up to the fetch's totals.
    struct Counters {
        std::size_t retries = 0;
        std::size_t hashMismatches = 0;
        std::size_t rangeIgnored = 0;
        std::size_t redirects = 0;
    };

    FileDownload(std::size_t position, MetalinkFile manifestFile, std::filesystem::path target,
                 std::vector<Url> urls, Backoff retryBackoff, Policy policy);

    FileState state() const { return report.state; }
    void setState(FileState state) { report.state = state; }
    /// The size to expect: the manifest's, else what the server said in this run.
    std::optional<std::uint64_t> expectedSize() const { return file.size ? file.size : serverSize; }
    /// Bytes still to fetch, for SRPT; nullopt when the size is unknown.
    std::optional<std::uint64_t> remaining() const;
    /// Where the next request goes: the mirror's URL, or where it redirected to.
    const Url& url() const { return redirect ? *redirect : mirrors[mirror]; }

    /// Opens the part file (trusting only the prefix that was hashed) and builds the next request; nullopt
    /// when the part file cannot be used, and then the file has failed (Done).
    std::optional<Http2Session::Request> nextRequest();
    /// The request went out as @p streamId on @p on.
    void attemptStarted(FetcherConnection* on, std::int32_t streamId);

    AfterHeaders onHeaders(int status, const Http2Session::Headers& headers);
    AfterData onData(std::span<const std::uint8_t> data);
    /// The attempt's stream closed: finish, retry, go on to the next mirror, or give up.
    Outcome onClosed(const StreamEnd& end, const ConnectionFacts& facts, Clock::time_point now);

    /// The body is complete (or was there already): check length and hash, then put it in place.
    Outcome finish(Clock::time_point now);
    Outcome attemptFailed(Failure failure, Clock::time_point now);
    /// Gives the file up with @p reason (the part file stays).
    Outcome fail(const std::string& reason);
    /// Sets a final state (Ok, AlreadyPresent, Failed).
    Outcome done(FileState final);
    /// Stops: the part file is closed and kept; an unfinished file ends Cancelled.
    void cancel();

    /// Adds this file's state, sizes and counters to @p totals.
    void countInto(FetchTotals& totals) const;
    /// @p n bytes of the attempt were acknowledged to the server.
    void acknowledged(std::size_t n) { attemptConsumed += n; }
    /// Bytes received on the attempt but not acknowledged.
    std::uint64_t unacknowledged() const {
        return attemptReceived - std::min(attemptReceived, attemptConsumed);
    }

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
    Clock::time_point readyAt;
    bool requested = false; ///< a request went out in this run (report.resumedFrom is set then)

    /// SHA-256 of the part file's bytes so far; the part file holds exactly `offset` bytes.
    Sha256 hash;
    std::uint64_t offset = 0;
    std::optional<std::uint64_t> serverSize;
    /// Open while an attempt runs, or while the inspection hashes it.
    std::optional<PartFile> part;

    // The attempt in progress.
    FetcherConnection* connection = nullptr;
    std::int32_t stream = 0;
    Mode mode = Mode::AwaitingHeaders;
    std::optional<std::uint64_t> bodyEnd; ///< the offset the body must end at, when announced
    std::optional<Failure> failure;
    std::uint64_t attemptReceived = 0;
    std::uint64_t attemptConsumed = 0;

    /// What observers see of this file.
    FetchFileReport report;
    Counters counters;

private:
    /// The attempt failed while its stream is open: remember why; the Fetcher resets the stream.
    void failAttempt(Failure failure);
    void restartFromZero();
    Outcome nextMirror(const std::string& reason);

    Policy m_policy;
};

} // namespace nicer::net
