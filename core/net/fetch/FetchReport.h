#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::net {

/// Where one file of a fetch stands.
enum class FileState {
    Checking,       ///< what an earlier run left (a part file, or the file itself) is being hashed
    Queued,         ///< waiting for a free stream
    Waiting,        ///< waiting out a backoff or Retry-After before the next attempt
    Active,         ///< being downloaded
    Ok,             ///< downloaded, verified and in place under its final name
    AlreadyPresent, ///< the final file was already there with the right size and hash
    Failed,         ///< given up: every mirror failed; FetchFileReport::error says why
    Cancelled,      ///< the fetch was stopped first; its .part file is kept for the next run
};

/// "checking", "queued", "waiting", "active", "ok", "already-present", "failed", "cancelled".
std::string_view toString(FileState state);

/// True for the states a file does not leave: Ok, AlreadyPresent, Failed, Cancelled.
bool isFinal(FileState state);

/// One file of a fetch, as reported to observers and in the summary.
struct FetchFileReport {
    std::string name;                  ///< as in the manifest
    std::filesystem::path path;        ///< where it is (or will be) written
    std::optional<std::uint64_t> size; ///< expected size: the manifest's, else the server's once known
    /// The manifest's SHA-256; for an unverified file the digest of what was saved, once it is.
    std::string sha256;
    /// False when there was no hash to check (a plain URL): only the length the server announced was checked.
    bool verified = true;
    FileState state = FileState::Queued;
    /// Bytes of the file in place now (in the .part file, or all of it when done).
    std::uint64_t bytesDone = 0;
    /// Attempts made for this file in this run: requests, each counted with the redirects it led to.
    int attempts = 0;
    /// Bytes the .part file already held when this run first asked for the file (0: from the start).
    std::uint64_t resumedFrom = 0;
    /// Body bytes received for this file in this run, including any that were discarded.
    std::uint64_t bytesDownloaded = 0;
    /// The URL it was downloaded from, once it is.
    std::string mirrorUsed;
    /// Why it failed (Failed), or the last failed attempt's reason while it is retried.
    std::string error;
};

/// Counters over the whole fetch.
struct FetchTotals {
    std::size_t files = 0;
    std::size_t filesOk = 0;
    std::size_t filesAlreadyPresent = 0;
    std::size_t filesFailed = 0;
    std::size_t filesUnverified = 0; ///< Ok files that had no hash to check
    /// Sum of the known expected sizes.
    std::uint64_t bytesTotal = 0;
    /// Bytes in place (part files and finished files).
    std::uint64_t bytesDone = 0;
    /// Body bytes received in this run.
    std::uint64_t bytesDownloaded = 0;
    std::chrono::duration<double> elapsed{0};
    /// Received body bytes per second over the last second or so.
    double currentRate = 0.0;
    /// The receive rate in force (--max-rate or the nice mode); nullopt when unlimited.
    std::optional<double> rateLimit;
    std::size_t connectionsOpened = 0;
    std::size_t streamsOpened = 0;
    std::size_t activeStreams = 0;
    /// Requests repeated after a failure, a refused stream or a GOAWAY.
    std::size_t retries = 0;
    /// Downloads whose SHA-256 did not match; each was discarded and tried again.
    std::size_t hashMismatches = 0;
    /// Range requests the server answered with the whole file, so the part file started over.
    std::size_t rangeIgnored = 0;
    /// Redirects followed (301, 302, 303, 307, 308).
    std::size_t redirects = 0;
};

/// The state of a whole fetch: what observers see while it runs, and the summary at the end.
struct FetchReport {
    std::vector<FetchFileReport> files; ///< in manifest order
    FetchTotals totals;
    bool finished = false;  ///< every file reached a final state (or the fetch was cancelled)
    bool cancelled = false; ///< cancel() stopped it
};

} // namespace nicer::net
