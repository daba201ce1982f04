#pragma once

#include "libsystemd/Event.h"
#include "libsystemd/Timer.h"
#include "net/fetch/ConnectionPool.h"
#include "net/fetch/FetchObserver.h"
#include "net/fetch/FetchPlan.h"
#include "net/fetch/FetchReport.h"
#include "net/fetch/FetcherConnection.h"
#include "net/fetch/FetcherOptions.h"
#include "net/fetch/FileDownload.h"
#include "net/fetch/FlowPacer.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/ResumeInspector.h"
#include "net/transport/TlsContext.h"
#include "util/Result.h"
#include "util/UniqueFd.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nicer::net {

/**
 * Downloads the files of a manifest into a directory over HTTP/2, on an sd-event loop the caller owns.
 *
 * All files on one origin (scheme, host, port) share ONE connection as multiplexed streams; at most
 * FetcherOptions::streams are open at once, handed out smallest-remaining-first (or in manifest order).
 * Each file is written to NAME.part as it arrives and resumes from there with a Range request after any
 * interruption, kill -9 included. Its SHA-256 is checked before NAME.part is atomically renamed to NAME,
 * so a corrupt file is never accepted under its final name. Failed attempts are retried with jittered
 * exponential backoff (Retry-After honoured), then the next mirror is tried. A rate limit or the nice mode
 * is enforced through HTTP/2 flow control: received bytes are acknowledged only as fast as the rate allows.
 *
 * Progress goes to a FetchObserver; report() holds the state at any time and the summary at the end.
 */
class Fetcher final : private FetcherConnection::Owner {
public:
    /// Checks the plan: every name must be a safe relative path (safeTargetPath) and unique, every file
    /// needs a mirror with an http(s) URL, @p dir is created if missing. Fails, without touching any file
    /// below @p dir, when one of these does not hold, or when the TLS setup (CA file) fails. A file
    /// without sha256 is downloaded unverified: only its length is checked. @p observer, if given, must
    /// outlive the Fetcher.
    static Result<std::unique_ptr<Fetcher>> create(sd_event* event, std::vector<MetalinkFile> files,
                                                   const std::filesystem::path& dir,
                                                   FetcherOptions options = {},
                                                   FetchObserver* observer = nullptr);
    ~Fetcher() override;
    Fetcher(const Fetcher&) = delete;
    Fetcher& operator=(const Fetcher&) = delete;

    /// Takes the directory (one fetch per directory at a time), looks at what is already there (finished
    /// files are hashed and skipped, part files are hashed to resume), then starts downloading on the loop.
    /// Fails only when the directory is in use by another fetch or cannot be opened.
    Result<void> start();
    /// Stops now: connections close, part files stay for the next run, unfinished files end Cancelled, and
    /// the observer gets onFinished().
    void cancel();

    /// Every file reached a final state (or cancel() was called); the directory is free for another fetch.
    bool finished() const { return m_report.finished; }
    /// The state of every file and the totals; the summary once finished().
    const FetchReport& report() const;

private:
    struct ClosedStream {
        std::size_t file = 0;
        FetcherConnection* connection = nullptr;
        StreamEnd end;
    };

    Fetcher(sd_event* event, FetchPlan plan, FetcherOptions options, FetchObserver* observer);

    // FetcherConnection::Owner
    void onResponseHeaders(FetcherConnection& connection, std::int32_t stream, int status,
                           const Http2Session::Headers& headers) override;
    void onData(FetcherConnection& connection, std::int32_t stream,
                std::span<const std::uint8_t> data) override;
    void onStreamClosed(FetcherConnection& connection, std::int32_t stream, StreamEnd end) override;
    void onPingAck(FetcherConnection& connection, std::chrono::nanoseconds rtt) override;
    void onConnectionChanged(FetcherConnection& connection) override;

    Result<void> setUpEvents();
    void kick();
    void runKick();
    void schedule();
    bool startAttempt(FileDownload& download, FetcherConnection& connection);
    void settle(FileDownload& download, FileDownload::Outcome outcome);
    void acknowledge(FileDownload& download, std::size_t n);
    FileDownload* downloadOf(FetcherConnection& connection, std::int32_t stream);

    void tick();
    void sample();
    void armWake();
    void refreshTotals() const;
    void finish();
    void stopWith(const std::string& error);

    libsystemd::EventPtr m_event;
    std::filesystem::path m_dir;
    FetcherOptions m_options;
    FetchObserver* m_observer;
    std::vector<FileDownload> m_downloads;
    /// The files' reports are copied in from m_downloads (where they live) whenever it is read.
    mutable FetchReport m_report;
    UniqueFd m_dirLock;
    ResumeInspector m_inspector;
    FlowPacer m_pacer;

    // After the downloads: the connections go first, their streams map into m_downloads.
    ConnectionPool m_pool;
    std::deque<ClosedStream> m_closed;
    std::chrono::steady_clock::time_point m_startTime;

    bool m_started = false;
    libsystemd::Defer m_kick;
    libsystemd::Timer m_tick;
    libsystemd::Timer m_wake;
};

} // namespace nicer::net
