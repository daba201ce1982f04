#include "daemon/DaemonDownloads.h"

#include "libsystemd/Bus.h"
#include "net/rate/NiceRateController.h"
#include "util/Log.h"

#include <algorithm>
#include <exception>

namespace nicer::daemon {

namespace {

bool inPlace(net::FileState state) {
    return state == net::FileState::Ok || state == net::FileState::AlreadyPresent;
}

} // namespace

DaemonDownloads::DaemonDownloads(sd_event* event, DownloadSettings settings)
    : m_event(event)
    , m_settings(std::move(settings)) {}

DaemonDownloads::~DaemonDownloads() {
    stop();
}

Result<std::unique_ptr<DaemonDownloads>> DaemonDownloads::create(sd_event* event, DownloadSettings settings) {
    if (settings.files.empty()) {
        return Error{"nothing to download: no manifest lists a file"};
    }
    if (settings.dir.empty()) {
        return Error{"no download directory given"};
    }
    auto self = std::unique_ptr<DaemonDownloads>(new DaemonDownloads(event, std::move(settings)));
    if (self->m_settings.nice) {
        self->m_nice = net::makeNiceRateController();
    }
    std::vector<std::size_t> all;
    for (const auto& file : self->m_settings.files) {
        net::FetchFileReport report;
        report.name = file.name;
        report.size = file.size;
        report.sha256 = file.sha256;
        report.verified = !file.sha256.empty();
        all.push_back(self->m_files.size());
        self->m_files.push_back(std::move(report));
    }
    // The first round's fetcher is made now: it checks the plan, so a bad one stops nicerd's start.
    auto fetcher = self->makeFetcher(all);
    if (!fetcher) {
        return fetcher.error();
    }
    self->m_fetcher = std::move(*fetcher);
    self->m_round = std::move(all);
    self->absorb(self->m_fetcher->report());

    auto* raw = self.get();
    // Accuracy of a second: a retry minutes away need not wake the machine at an exact moment.
    auto retry = libsystemd::Timer::create(
        event, [raw] { raw->startRound(); }, CLOCK_MONOTONIC, std::chrono::seconds(1));
    if (!retry) {
        return Error{"cannot set up the download retry timer: " + retry.error().message};
    }
    self->m_retry = std::move(*retry);
    self->m_retry.setErrorHandler([raw](std::string_view what) {
        raw->failRound("nicerd could not start the download: " + std::string(what));
    });
    auto release = libsystemd::Defer::create(event, [raw] { raw->releaseFinished(); });
    if (!release) {
        return Error{"cannot set up the download loop: " + release.error().message};
    }
    self->m_release = std::move(*release);
    return self;
}

Result<std::unique_ptr<net::Fetcher>> DaemonDownloads::makeFetcher(const std::vector<std::size_t>& round) {
    std::vector<net::MetalinkFile> files;
    files.reserve(round.size());
    for (const std::size_t i : round) {
        files.push_back(m_settings.files[i]);
    }
    net::FetcherOptions options;
    options.streams = m_settings.streams;
    options.maxRate = m_settings.maxRate;
    options.tls.caFile = m_settings.caFile;
    options.rateController = m_nice.get();
    return net::Fetcher::create(m_event, std::move(files), m_settings.dir, std::move(options), this);
}

void DaemonDownloads::start(const control::WeeklyHours& hours, const wallclock::LocalMinute& now) {
    followHours(hours, now);
    if (!m_stopped) {
        startRound(); // nothing while held
    }
}

void DaemonDownloads::followHours(const control::WeeklyHours& hours, const wallclock::LocalMinute& now) {
    const bool outside = !hours.allows(now.weekday, now.minute);
    if (m_stopped || (!outside && !m_held)) {
        return;
    }
    if (!outside) {
        m_held = false;
        log::notice() << "nicerd: the transfer hours (" << hours.text() << ") begin: the downloads go on";
        startRound();
        return;
    }
    if (!m_held) {
        m_held = true;
        log::notice() << "nicerd: outside the transfer hours (" << hours.text() << "): the downloads wait";
        m_retryAt.reset();
        if (m_retry) {
            m_retry.disarm();
        }
        if (m_fetcher && m_fetcherStarted && !m_fetcher->finished()) {
            m_fetcher->cancel(); // part files stay for the next round
            absorb(m_fetcher->report());
        }
        m_release.cancel();
        m_fetcher.reset();
        m_fetcherStarted = false;
    }
    // Said again every period, so that the time left stays true.
    const auto until = hours.minutesUntilChange(now.weekday, now.minute);
    const std::string reason =
        "outside your transfer hours (" + hours.text() + ")" +
        (until ? ", which begin in " + wallclock::durationText(std::chrono::minutes(*until)) : "");
    for (auto& file : m_files) {
        if (!inPlace(file.state)) {
            file.state = net::FileState::Waiting;
            file.error = reason;
        }
    }
}

void DaemonDownloads::startRound() {
    if (m_held) {
        return;
    }
    m_retryAt.reset();
    if (m_fetcherStarted) {
        // The last round's fetcher, finished: only the files not in place go into the next one.
        m_release.cancel();
        m_fetcher.reset();
        m_fetcherStarted = false;
    }
    if (!m_fetcher) {
        std::vector<std::size_t> round;
        for (std::size_t i = 0; i < m_files.size(); ++i) {
            if (!inPlace(m_files[i].state)) {
                round.push_back(i);
            }
        }
        if (round.empty()) {
            return;
        }
        m_round = round;
        auto fetcher = makeFetcher(round);
        if (!fetcher) {
            failRound(fetcher.error().message);
            return;
        }
        m_fetcher = std::move(*fetcher);
    }
    m_fetcherStarted = true;
    if (auto started = m_fetcher->start(); !started) {
        m_fetcher.reset();
        m_fetcherStarted = false;
        failRound(started.error().message);
        return;
    }
    absorb(m_fetcher->report());
}

void DaemonDownloads::failRound(const std::string& reason) {
    for (const std::size_t i : m_round) {
        m_files[i].state = net::FileState::Failed;
        m_files[i].error = reason;
    }
    armRetry();
}

void DaemonDownloads::armRetry() {
    if (m_stopped || m_held || !m_retry) {
        return;
    }
    m_retry.armIn(m_settings.retryDelay);
    m_retryAt = Clock::now() + m_settings.retryDelay;
}

void DaemonDownloads::stop() {
    if (m_stopped) {
        return;
    }
    m_stopped = true;
    m_retryAt.reset();
    m_retry = libsystemd::Timer();
    if (m_fetcher && m_fetcherStarted && !m_fetcher->finished()) {
        m_fetcher->cancel(); // part files stay for the next run
    }
    m_release = libsystemd::Defer();
    m_fetcher.reset();
    m_fetcherStarted = false;
}

void DaemonDownloads::absorb(const net::FetchReport& report) {
    for (std::size_t k = 0; k < report.files.size() && k < m_round.size(); ++k) {
        m_files[m_round[k]] = report.files[k];
    }
    std::vector<std::uint64_t> bytes;
    bytes.reserve(m_files.size());
    for (const auto& file : m_files) {
        bytes.push_back(file.bytesDone);
    }
    m_rates.record(Clock::now(), bytes);
}

void DaemonDownloads::onProgress(const net::FetchReport& report) {
    absorb(report);
}

void DaemonDownloads::onFileDone(const net::FetchReport& report, std::size_t) {
    absorb(report);
}

void DaemonDownloads::onFinished(const net::FetchReport& report) {
    absorb(report);
    if (m_stopped || m_held) {
        return;
    }
    // The finished fetcher still holds the directory's lock: let it go on the next turn of the loop (it
    // must not be destroyed from its own callback).
    m_release.trigger();
    if (!complete()) {
        armRetry();
    }
}

void DaemonDownloads::releaseFinished() {
    if (m_fetcher && m_fetcherStarted && m_fetcher->finished()) {
        m_fetcher.reset();
        m_fetcherStarted = false;
    }
}

std::vector<net::FetchFileReport> DaemonDownloads::currentFiles() const {
    auto files = m_files;
    if (m_fetcher && m_fetcherStarted && !m_fetcher->finished()) {
        const auto& live = m_fetcher->report().files;
        for (std::size_t k = 0; k < live.size() && k < m_round.size(); ++k) {
            files[m_round[k]] = live[k];
        }
    }
    return files;
}

std::vector<api::DownloadEntry> DaemonDownloads::entries() const {
    const auto now = Clock::now();
    std::optional<std::chrono::seconds> retryIn;
    if (m_retryAt) {
        retryIn =
            std::chrono::ceil<std::chrono::seconds>(std::max(Clock::duration::zero(), *m_retryAt - now));
    }
    const auto files = currentFiles();
    std::vector<api::DownloadEntry> entries;
    entries.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto& file = files[i];
        api::DownloadEntry e =
            downloadEntry(file, file.state == net::FileState::Failed ? retryIn : std::nullopt);
        e.name = file.name;
        e.bytesDone = file.bytesDone;
        e.bytesTotal = file.size.value_or(inPlace(file.state) ? file.bytesDone : 0);
        e.rate = file.state == net::FileState::Active ? m_rates.rate(i, now) : 0.0;
        entries.push_back(std::move(e));
    }
    return entries;
}

void DaemonDownloads::describe(api::DaemonState& state) const {
    state.downloads = entries();
    state.downloadRate = rate();
    const auto mode = bandwidthMode();
    state.bandwidthMode = api::bandwidthKindKeyword(mode.kind);
    state.bandwidthCap = mode.capBytesPerSecond.value_or(0);
}

double DaemonDownloads::rate() const {
    if (m_fetcher && m_fetcherStarted && !m_fetcher->finished()) {
        return m_fetcher->report().totals.currentRate;
    }
    return 0.0;
}

api::BandwidthMode DaemonDownloads::bandwidthMode() const {
    return daemon::bandwidthMode(true, m_settings.nice, m_settings.maxRate);
}

bool DaemonDownloads::complete() const {
    return std::all_of(m_files.begin(), m_files.end(), [](const auto& f) { return inPlace(f.state); });
}

} // namespace nicer::daemon
