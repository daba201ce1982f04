#include "net/fetch/Fetcher.h"

#include "net/fetch/DownloadDirectory.h"

#include <algorithm>

namespace nicer::net {

namespace {

// Bytes of earlier runs' files hashed per turn of the loop: about 5 ms of SHA-256.
constexpr std::uint64_t kInspectBudget = 8 * 1024 * 1024;

} // namespace

Fetcher::Fetcher(sd_event* event, FetchPlan plan, FetcherOptions options, FetchObserver* observer)
    : m_event(sd_event_ref(event))
    , m_dir(std::move(plan.dir))
    , m_options(std::move(options))
    , m_observer(observer)
    , m_inspector(m_dir, [this](FileDownload& download) { settle(download, FileDownload::Outcome::Done); })
    , m_pacer(m_options)
    , m_pool(event, *this, m_options.tls, m_options.connectTimeout) {
    auto& o = m_options;
    if (!o.uniform01) {
        o.uniform01 = makeUniform01();
    }
    const FileDownload::Policy policy{m_dir, o.attemptsPerMirror, o.freeRetries};
    m_downloads.reserve(plan.files.size());
    for (auto& planned : plan.files) {
        m_downloads.emplace_back(m_downloads.size(), std::move(planned.file), std::move(planned.target),
                                 std::move(planned.mirrors),
                                 Backoff(o.backoffBase, o.backoffCap, o.uniform01), policy);
    }
    m_report.totals.files = m_downloads.size();
    refreshTotals();
}

Fetcher::~Fetcher() = default;

Result<std::unique_ptr<Fetcher>> Fetcher::create(sd_event* event, std::vector<MetalinkFile> files,
                                                 const std::filesystem::path& dir, FetcherOptions options,
                                                 FetchObserver* observer) {
    auto plan = planFetch(std::move(files), dir, options);
    if (!plan) {
        return plan.error();
    }
    const bool anyTls = plan->anyTls;
    std::unique_ptr<Fetcher> fetcher(new Fetcher(event, std::move(*plan), std::move(options), observer));
    if (anyTls || fetcher->m_options.tls.caFile) {
        if (auto tls = fetcher->m_pool.setUpTls(); !tls) {
            return tls.error();
        }
    }
    return fetcher;
}

const FetchReport& Fetcher::report() const {
    if (!m_report.finished) {
        refreshTotals();
    }
    return m_report;
}

Result<void> Fetcher::start() {
    if (m_started) {
        return Error{"this fetch has already started"};
    }
    auto lock = lockDownloadDirectory(m_dir);
    if (!lock) {
        return lock.error();
    }
    m_dirLock = std::move(*lock);
    if (auto events = setUpEvents(); !events) {
        return events;
    }
    m_started = true;
    m_startTime = m_pacer.now();
    // Ask the nice mode too before any window goes out: otherwise the server gets the full default windows
    // of credit (tens of MiB) before the first sample, and on a slow link that is the whole download.
    m_pacer.start();
    for (auto& download : m_downloads) {
        m_inspector.add(download);
    }
    refreshTotals();
    m_tick.armIn(m_pacer.tickInterval());
    kick();
    return {};
}

Result<void> Fetcher::setUpEvents() {
    auto kickSource = libsystemd::Defer::create(m_event.get(), [this] { runKick(); });
    if (!kickSource) {
        return Error{"cannot set up the download loop: " + kickSource.error().message};
    }
    auto tickTimer = libsystemd::Timer::create(m_event.get(), [this] { tick(); });
    if (!tickTimer) {
        return Error{"cannot set up the download timer: " + tickTimer.error().message};
    }
    auto wakeTimer = libsystemd::Timer::create(m_event.get(), [this] { kick(); });
    if (!wakeTimer) {
        return Error{"cannot set up the retry timer: " + wakeTimer.error().message};
    }
    m_kick = std::move(*kickSource);
    m_tick = std::move(*tickTimer);
    m_wake = std::move(*wakeTimer);
    // Only allocation can throw in these; nothing sensible is left to do but stop.
    const auto onError = [this](std::string_view what) { stopWith(std::string(what)); };
    for (libsystemd::detail::Source* source :
         std::initializer_list<libsystemd::detail::Source*>{&m_kick, &m_tick, &m_wake}) {
        source->setErrorHandler(onError);
    }
    return {};
}

void Fetcher::stopWith(const std::string& error) {
    for (auto& download : m_downloads) {
        if (!isFinal(download.state())) {
            download.report.error = "internal error: " + error;
        }
    }
    cancel();
}

void Fetcher::cancel() {
    if (m_report.finished) {
        return;
    }
    m_report.cancelled = true;
    m_pool.failAll(Error{"the download was cancelled"});
    m_closed.clear();
    m_inspector.clear();
    for (auto& download : m_downloads) {
        download.cancel();
    }
    finish();
}

void Fetcher::kick() {
    if (!m_report.finished) {
        m_kick.trigger();
    }
}

// Everything that changes the set of streams runs here, outside the connections' callbacks.
void Fetcher::runKick() {
    if (m_report.finished) {
        return;
    }
    const bool moreToInspect = m_inspector.run(kInspectBudget, m_pacer.now());
    while (!m_closed.empty()) {
        const ClosedStream closed = m_closed.front();
        m_closed.pop_front();
        FileDownload& download = m_downloads[closed.file];
        const FetcherConnection& c = *closed.connection;
        const FileDownload::ConnectionFacts facts{c.everConnected(), c.failedPermanently(),
                                                  c.error() ? std::optional(c.error()->message)
                                                            : std::nullopt};
        settle(download, download.onClosed(closed.end, facts, m_pacer.now()));
    }
    m_pool.reap();
    schedule();
    armWake();
    if (moreToInspect) {
        kick(); // the next piece after the loop's other events
    }
    const bool allFinal = std::all_of(m_downloads.begin(), m_downloads.end(),
                                      [](const FileDownload& download) { return isFinal(download.state()); });
    if (allFinal && m_closed.empty()) {
        finish();
    }
}

void Fetcher::settle(FileDownload& download, FileDownload::Outcome outcome) {
    if (outcome == FileDownload::Outcome::Done && m_observer) {
        m_observer->onFileDone(report(), download.index);
    }
}

void Fetcher::schedule() {
    const auto now = m_pacer.now();
    std::size_t active = 0;
    std::vector<PendingDownload> pending;
    for (auto& download : m_downloads) {
        if (download.state() == FileState::Waiting && download.readyAt <= now) {
            download.setState(FileState::Queued);
        }
        if (download.state() == FileState::Active) {
            ++active;
        } else if (download.state() == FileState::Queued) {
            pending.push_back(PendingDownload{download.index, download.remaining()});
        }
    }
    if (active >= m_options.streams || pending.empty()) {
        return;
    }
    for (const std::size_t index : pickNext(pending, pending.size(), m_options.order)) {
        if (active >= m_options.streams) {
            break;
        }
        FileDownload& download = m_downloads[index];
        auto opened = m_pool.connectionFor(download.url(), m_pacer.sessionOptions());
        if (!opened) {
            settle(download, download.attemptFailed({AttemptFailure::Retry, opened.error().message}, now));
            continue;
        }
        FetcherConnection* connection = *opened;
        if (connection->activeStreams() >= std::min(connection->maxConcurrentStreams(), m_options.streams)) {
            continue; // this server's limit; a stream closing there calls schedule() again
        }
        if (startAttempt(download, *connection)) {
            ++active;
        }
    }
}

bool Fetcher::startAttempt(FileDownload& download, FetcherConnection& connection) {
    const auto request = download.nextRequest();
    if (!request) {
        settle(download, FileDownload::Outcome::Done); // the part file cannot be used
        return false;
    }
    auto stream = connection.submit(*request);
    if (!stream) {
        download.part->close();
        settle(download,
               download.attemptFailed({AttemptFailure::Retry, stream.error().message}, m_pacer.now()));
        return false;
    }
    download.attemptStarted(&connection, *stream);
    m_pool.track(connection, *stream, download.index);
    ++m_report.totals.streamsOpened;
    return true;
}

FileDownload* Fetcher::downloadOf(FetcherConnection& connection, std::int32_t stream) {
    const auto file = m_pool.fileOf(connection, stream);
    return file ? &m_downloads[*file] : nullptr;
}

void Fetcher::acknowledge(FileDownload& download, std::size_t n) {
    if (download.connection && n > 0) {
        download.acknowledged(download.connection->consume(download.stream, n));
    }
}

void Fetcher::onResponseHeaders(FetcherConnection& connection, std::int32_t stream, int status,
                                const Http2Session::Headers& headers) {
    FileDownload* download = downloadOf(connection, stream);
    if (!download) {
        return;
    }
    switch (download->onHeaders(status, headers)) {
    case FileDownload::AfterHeaders::Ignore:
        return;
    case FileDownload::AfterHeaders::Write:
        if (m_pacer.windowsShrunk()) {
            // The stream started with the SETTINGS window of its connection, which may be out of date.
            const std::int32_t streams[] = {stream};
            connection.setWindows(m_pacer.connectionWindow(), streams, m_pacer.streamWindow());
        }
        return;
    case FileDownload::AfterHeaders::Reset:
        connection.resetStream(stream);
        return;
    }
}

void Fetcher::onData(FetcherConnection& connection, std::int32_t stream, std::span<const std::uint8_t> data) {
    m_pacer.received(data.size());
    FileDownload* download = downloadOf(connection, stream);
    if (!download) {
        m_pacer.charge(data.size());
        connection.consume(stream, data.size());
        return;
    }
    switch (download->onData(data)) {
    case FileDownload::AfterData::Pace:
        acknowledge(*download, static_cast<std::size_t>(m_pacer.take(connection.unconsumed(stream))));
        return;
    case FileDownload::AfterData::ResetAndDiscard:
        connection.resetStream(stream);
        [[fallthrough]];
    case FileDownload::AfterData::Discard:
        // Not ours to keep, but they took the link.
        m_pacer.charge(data.size());
        acknowledge(*download, data.size());
        return;
    case FileDownload::AfterData::Reset:
        connection.resetStream(stream);
        return;
    }
}

void Fetcher::onStreamClosed(FetcherConnection& connection, std::int32_t stream, StreamEnd end) {
    const auto file = m_pool.untrack(connection, stream);
    if (!file) {
        return;
    }
    // The session released what we had not acknowledged; it still counts against the rate.
    m_pacer.charge(m_downloads[*file].unacknowledged());
    m_closed.push_back(ClosedStream{*file, &connection, end});
    kick();
}

void Fetcher::onPingAck(FetcherConnection& /*connection*/, std::chrono::nanoseconds rtt) {
    m_pacer.onRtt(rtt);
}

void Fetcher::onConnectionChanged(FetcherConnection& /*connection*/) {
    kick();
}

void Fetcher::armWake() {
    std::optional<FileDownload::Clock::time_point> earliest;
    for (const auto& download : m_downloads) {
        if (download.state() == FileState::Waiting) {
            earliest = earliest ? std::min(*earliest, download.readyAt) : download.readyAt;
        }
    }
    if (!earliest) {
        m_wake.disarm();
        return;
    }
    m_wake.armIn(std::max(FileDownload::Clock::duration::zero(), *earliest - m_pacer.now()));
}

void Fetcher::tick() {
    if (m_pacer.rateLimit()) {
        // Withheld bytes are acknowledged as the bucket refills, shared so that no stream starves.
        const auto pending = m_pool.unacknowledged();
        std::vector<std::size_t> bytes;
        bytes.reserve(pending.size());
        for (const auto& [file, n] : pending) {
            bytes.push_back(n);
        }
        const auto shares = m_pacer.share(bytes);
        for (std::size_t i = 0; i < pending.size(); ++i) {
            acknowledge(m_downloads[pending[i].first], shares[i]);
        }
    }
    if (m_pacer.sampleDue()) {
        sample();
    }
    if (!m_report.finished) {
        m_tick.armIn(m_pacer.tickInterval());
    }
}

void Fetcher::sample() {
    m_pool.checkStall(m_pacer.now(), m_options.stallTimeout, m_options.minRate);
    if (m_pacer.sample()) {
        m_pool.setWindows(m_pacer.connectionWindow(), m_pacer.streamWindow());
    }
    if (m_options.rateController) {
        m_pool.pingBusiest(); // the next RTT for the controller, queued behind the data
    }
    if (m_observer && !m_report.finished) {
        m_observer->onProgress(report());
    }
}

void Fetcher::refreshTotals() const {
    auto& t = m_report.totals;
    t.filesOk = t.filesAlreadyPresent = t.filesFailed = t.filesUnverified = 0;
    t.bytesTotal = t.bytesDone = 0;
    t.retries = t.hashMismatches = t.rangeIgnored = t.redirects = 0;
    t.activeStreams = m_pool.streams();
    t.connectionsOpened = m_pool.opened();
    m_report.files.resize(m_downloads.size());
    for (const auto& download : m_downloads) {
        m_report.files[download.index] = download.report;
        download.countInto(t);
    }
    t.bytesDownloaded = m_pacer.receivedBytes();
    t.currentRate = m_pacer.currentRate();
    t.rateLimit = m_pacer.rateLimit();
    if (m_started) {
        t.elapsed = m_pacer.now() - m_startTime;
    }
}

void Fetcher::finish() {
    if (m_report.finished) {
        return;
    }
    m_report.finished = true;
    m_pool.shutdownAll();
    // Nothing is written any more: the next fetch into this directory may start while this object lives.
    m_dirLock.reset();
    m_tick.disarm();
    m_wake.disarm();
    m_kick.cancel();
    refreshTotals();
    if (m_observer) {
        m_observer->onFinished(m_report);
    }
}

} // namespace nicer::net
