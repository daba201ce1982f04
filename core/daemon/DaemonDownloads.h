#pragma once

#include "api/DaemonState.h"
#include "control/WeeklyHours.h"
#include "daemon/DownloadRates.h"
#include "daemon/DownloadSettings.h"
#include "daemon/DownloadStatus.h"
#include "libsystemd/Event.h"
#include "libsystemd/Timer.h"
#include "net/fetch/FetchObserver.h"
#include "net/fetch/Fetcher.h"
#include "net/rate/RateController.h"
#include "util/Result.h"
#include "util/WallClock.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * nicerd's downloads: the work units of its manifests fetched into the workload's directory, on the
 * daemon's own sd-event loop, under the same kind of control as the CPU (the nice mode yields the link to
 * the user's traffic; a cap holds it under a rate).
 *
 * A fetch runs in rounds. The first starts with the daemon; when a round ends with failed files, only those
 * are tried again after the retry delay (never in a tight loop), until every file is in place. Between
 * rounds no fetcher exists, so the directory is free for `nicer fetch`. Everything is non-blocking and
 * shares the loop with the CPU controller, except that a round's start hashes the files already there.
 */
class DaemonDownloads final : private net::FetchObserver {
public:
    using Clock = std::chrono::steady_clock;

    /// Checks the whole plan (names, mirrors, the CA file) without downloading: the error says what is
    /// wrong. @p settings.dir must be set. @p event must outlive this object.
    static Result<std::unique_ptr<DaemonDownloads>> create(sd_event* event, DownloadSettings settings);
    ~DaemonDownloads() override;
    DaemonDownloads(const DaemonDownloads&) = delete;
    DaemonDownloads& operator=(const DaemonDownloads&) = delete;

    /// Starts the first round, or waits when @p now is outside the transfer @p hours (followHours). A round
    /// that cannot start (the directory is locked by another fetch, or cannot be opened) counts as failed and
    /// is retried later.
    void start(const control::WeeklyHours& hours = {},
               const wallclock::LocalMinute& now = wallclock::localMinute(std::chrono::system_clock::now()));
    /// Stops now: part files stay for the next run; no round starts any more.
    void stop();
    /// Follows the transfer hours (ControllerParams::transferHours) at @p now: outside them the running
    /// round stops (part files stay) and every file not in place waits, saying why; back inside, a round
    /// starts at once. Called every period.
    void followHours(const control::WeeklyHours& hours, const wallclock::LocalMinute& now);
    /// Whether the transfer hours hold the downloads now.
    bool held() const { return m_held; }

    /// Every file, in manifest order.
    std::vector<api::DownloadEntry> entries() const;
    /// Body bytes per second received now, over all files.
    double rate() const;
    /// The BandwidthMode and BandwidthCap properties (daemon::bandwidthMode()).
    api::BandwidthMode bandwidthMode() const;
    /// Its part of the daemon's state: the files, the rate and the bandwidth mode.
    void describe(api::DaemonState& state) const;
    const std::filesystem::path& dir() const { return m_settings.dir; }
    /// Every file is in place (ok or present).
    bool complete() const;

private:
    DaemonDownloads(sd_event* event, DownloadSettings settings);

    Result<std::unique_ptr<net::Fetcher>> makeFetcher(const std::vector<std::size_t>& round);
    void startRound();
    void failRound(const std::string& reason);
    void armRetry();
    void absorb(const net::FetchReport& report);
    std::vector<net::FetchFileReport> currentFiles() const;

    // net::FetchObserver
    void onProgress(const net::FetchReport& report) override;
    void onFileDone(const net::FetchReport& report, std::size_t index) override;
    void onFinished(const net::FetchReport& report) override;

    /// Lets the finished fetcher go (and with it the directory's lock), outside its own callbacks.
    void releaseFinished();

    sd_event* m_event;
    DownloadSettings m_settings;
    std::unique_ptr<net::RateController> m_nice;
    std::unique_ptr<net::Fetcher> m_fetcher;
    bool m_fetcherStarted = false;
    /// The round's file i is m_files[m_round[i]].
    std::vector<std::size_t> m_round;
    /// The last known state of every file, across rounds.
    std::vector<net::FetchFileReport> m_files;
    DownloadRates m_rates;
    std::optional<Clock::time_point> m_retryAt;
    libsystemd::Timer m_retry;
    libsystemd::Defer m_release;
    bool m_stopped = false;
    bool m_held = false; ///< outside the transfer hours
};

} // namespace nicer::daemon
