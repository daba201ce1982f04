#include "net/fetch/Fetcher.h"

#include "net/fetch/DownloadResponse.h"
#include "net/fetch/SafePath.h"
#include "net/http2/HttpHeaders.h"
#include "net/rate/InterfaceTraffic.h"
#include "net/rate/RateController.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/file.h>
#include <unistd.h>

namespace nicer::net {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// With a rate limit the windows shrink to about rate x max(2 RTT, this), so the server can never run more
// than that far ahead of what the rate allows. 25 ms: a half-window burst then queues no more than the nice
// mode's delay target (bench/net measured 100 ms windows making up to 50 ms of self-made queue).
constexpr auto kMinWindowTime = 25ms;
// Smaller windows would cut DATA frames (16 KiB by default) into pieces.
constexpr std::uint32_t kMinWindow = 64 * 1024;
// Bytes of earlier runs' files hashed per turn of the loop: about 5 ms of SHA-256.
constexpr std::uint64_t kInspectBudget = 8 * 1024 * 1024;
// Redirects followed in a row before a mirror is given up; browsers allow 20, curl -L 50.
constexpr int kMaxRedirects = 10;
// Windows are changed only when the target moves by more than this factor, not on every sample.
constexpr double kWindowHysteresis = 1.25;
// Current rate: received bytes over this much recent time.
constexpr auto kRateWindow = 1s;

std::uint64_t toUsec(Clock::duration d) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

std::optional<std::string> header(const Http2Session::Headers& headers, std::string_view name) {
    for (const auto& [key, value] : headers) {
        if (key == name) {
            return value;
        }
    }
    return std::nullopt;
}

std::string sizeText(std::uint64_t bytes) {
    return std::to_string(bytes) + " bytes";
}

// What a redirect response means for @p task: follow it, or give the mirror up and say why.
DownloadTask::Failure redirectOf(const DownloadTask& task, const ResponseVerdict& verdict) {
    auto target = resolveUrl(task.url(), verdict.location);
    if (!target) {
        return {AttemptFailure::NextMirror,
                verdict.reason + " with a Location nicer cannot follow: " + target.error().message};
    }
    const std::string to = verdict.reason + " to " + target->toString();
    if (task.redirects >= kMaxRedirects) {
        return {AttemptFailure::NextMirror, to + ", redirect number " + std::to_string(task.redirects + 1) +
                                                " in a row; giving this mirror up (a redirect loop?)"};
    }
    if (task.url().scheme == "https" && target->scheme == "http") {
        return {AttemptFailure::NextMirror, to + "; a redirect from https to http is not followed, it would "
                                                 "drop the server's authentication and encryption"};
    }
    return {AttemptFailure::Redirect, to, std::nullopt, std::move(*target)};
}

} // namespace

Fetcher::Fetcher(sd_event* event, std::filesystem::path dir, FetcherOptions options, FetchObserver* observer)
    : m_event(sd_event_ref(event))
    , m_dir(std::move(dir))
    , m_options(std::move(options))
    , m_observer(observer)
    , m_limiter(Clock::now()) {}

Fetcher::~Fetcher() {
    // Connections first: they hold pointers to nothing of ours, but their streams map into m_tasks.
    m_connections.clear();
}

Result<std::unique_ptr<Fetcher>> Fetcher::create(sd_event* event, std::vector<MetalinkFile> files,
                                                 std::filesystem::path dir, FetcherOptions options,
                                                 FetchObserver* observer) {
    if (files.empty()) {
        return Error{"nothing to download: the manifest lists no files"};
    }
    if (options.streams == 0) {
        return Error{"the number of streams must be at least 1"};
    }
    if (options.attemptsPerMirror < 1) {
        return Error{"the number of attempts per mirror must be at least 1"};
    }
    if (options.maxRate && !(*options.maxRate > 0.0)) {
        return Error{"the maximum rate must be above 0 bytes per second"};
    }
    if (dir.empty()) {
        return Error{"no download directory given"};
    }
    std::error_code ec;
    dir = std::filesystem::absolute(dir, ec);
    if (ec) {
        return Error{"cannot use the download directory " + dir.string() + ": " + ec.message()};
    }

    // The whole plan is checked before anything is written: one unsafe name refuses the manifest.
    std::set<std::filesystem::path> targets;
    std::vector<std::vector<Url>> mirrors;
    bool anyTls = false;
    for (const auto& file : files) {
        auto target = safeTargetPath(dir, file.name);
        if (!target) {
            return target.error();
        }
        if (!targets.insert(*target).second) {
            return Error{"file name '" + file.name +
                         "' appears twice in the manifest; every file needs its own name"};
        }
        if (!file.sha256.empty() && !isSha256Hex(file.sha256)) {
            return Error{"file '" + file.name +
                         "' has a SHA-256 that is not 64 hex digits; fix the manifest"};
        }
        std::vector<Url> urls;
        for (const auto& mirror : file.mirrors) {
            auto url = parseUrl(mirror.url);
            if (!url) {
                return Error{"file '" + file.name + "': " + url.error().message};
            }
            anyTls = anyTls || url->scheme == "https";
            urls.push_back(std::move(*url));
        }
        if (urls.empty()) {
            return Error{"file '" + file.name + "' has no http:// or https:// URL to download it from"};
        }
        mirrors.push_back(std::move(urls));
    }

    std::unique_ptr<Fetcher> fetcher(new Fetcher(event, dir, std::move(options), observer));
    auto& o = fetcher->m_options;
    if (anyTls || o.tls.caFile) {
        auto tls = TlsContext::create(o.tls);
        if (!tls) {
            return tls.error();
        }
        fetcher->m_tls = std::move(*tls);
    }
    if (!o.uniform01) {
        o.uniform01 = makeUniform01();
    }
    fetcher->m_tasks.reserve(files.size());
    fetcher->m_report.files.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        FetchFileReport report;
        report.name = files[i].name;
        report.path = *safeTargetPath(dir, files[i].name);
        report.size = files[i].size;
        report.sha256 = files[i].sha256;
        report.verified = !files[i].sha256.empty();
        fetcher->m_report.files.push_back(std::move(report));
        fetcher->m_tasks.emplace_back(i, std::move(files[i]), std::move(mirrors[i]),
                                      Backoff(o.backoffBase, o.backoffCap, o.uniform01));
    }
    fetcher->m_report.totals.files = fetcher->m_tasks.size();
    return fetcher;
}

Result<void> Fetcher::start() {
    if (m_started) {
        return Error{"this fetch has already started"};
    }
    std::error_code ec;
    std::filesystem::create_directories(m_dir, ec);
    if (ec) {
        return Error{"cannot create the download directory " + m_dir.string() + ": " + ec.message()};
    }
    m_dirLock.reset(::open(m_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!m_dirLock) {
        return Error{"cannot open the download directory " + m_dir.string() + ": " + std::strerror(errno)};
    }
    // Two fetches writing the same part files would corrupt each other's prefixes.
    if (::flock(m_dirLock.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            return Error{"another nicer fetch is already downloading into " + m_dir.string() +
                         "; wait for it to finish or choose another --dir"};
        }
        return Error{"cannot lock the download directory " + m_dir.string() + ": " + std::strerror(errno)};
    }
    if (auto events = setUpEvents(); !events) {
        return events;
    }
    m_started = true;
    m_startTime = Clock::now();
    m_lastSample = m_startTime;
    m_rateWindow.emplace_back(m_startTime, 0);
    // Ask the nice mode too before any window goes out: otherwise the server gets the full default windows
    // of credit (tens of MiB) before the first sample, and on a slow link that is the whole download.
    applyRate(allowedRate(m_startTime), m_startTime);
    for (auto& task : m_tasks) {
        m_report.files[task.index].state = FileState::Checking;
        m_inspecting.push_back(task.index);
    }
    refreshTotals();
    armTick();
    kick();
    return {};
}

Result<void> Fetcher::setUpEvents() {
    sd_event_source* source = nullptr;
    int r = sd_event_add_defer(m_event.get(), &source, &Fetcher::onKickEvent, this);
    if (r < 0) {
        return Error{std::string("cannot set up the download loop: ") + std::strerror(-r)};
    }
    m_kick.reset(source);
    sd_event_source_set_enabled(source, SD_EVENT_OFF);
    r = sd_event_add_time(m_event.get(), &source, CLOCK_MONOTONIC, UINT64_MAX, 1000, &Fetcher::onTimerEvent,
                          this);
    if (r < 0) {
        return Error{std::string("cannot set up the download timer: ") + std::strerror(-r)};
    }
    m_tick.reset(source);
    sd_event_source_set_enabled(source, SD_EVENT_OFF);
    r = sd_event_add_time(m_event.get(), &source, CLOCK_MONOTONIC, UINT64_MAX, 1000, &Fetcher::onWakeEvent,
                          this);
    if (r < 0) {
        return Error{std::string("cannot set up the retry timer: ") + std::strerror(-r)};
    }
    m_wake.reset(source);
    sd_event_source_set_enabled(source, SD_EVENT_OFF);
    return {};
}

// Looks at what earlier runs left, a task at a time: a finished file that verifies is skipped; a part file is
// hashed so the download resumes where it ends and the final hash still covers every byte. At most
// kInspectBudget bytes are hashed per turn of the loop, so a download directory of many gigabytes never
// holds up the loop (nicerd's CPU control and D-Bus run on it). Returns true while there is more to do.
bool Fetcher::inspectSome() {
    std::uint64_t budget = kInspectBudget;
    while (!m_inspecting.empty()) {
        DownloadTask& task = m_tasks[m_inspecting.front()];
        if (!task.inspection && !startInspection(task)) {
            m_inspecting.pop_front(); // decided without hashing
            continue;
        }
        if (budget == 0) {
            return true;
        }
        auto& in = *task.inspection;
        const std::uint64_t n = std::min(budget, in.size - in.done);
        budget -= n;
        const auto hashed = in.final ? task.part->hashFinal(in.finalFile, in.hash, in.done, n)
                                     : task.part->hashPart(in.hash, in.done, n);
        if (!hashed && !in.final) {
            task.inspection.reset();
            failFile(task, hashed.error().message);
            m_inspecting.pop_front();
            continue;
        }
        if (!hashed) {
            // An unreadable finished file is left alone (only a download that verifies replaces it): look at
            // the part file instead.
            task.inspection.reset();
            PartFile part = std::move(*task.part);
            task.part.reset();
            if (!startPartInspection(task, std::move(part))) {
                m_inspecting.pop_front();
            }
            continue;
        }
        in.done += n;
        if (in.done == in.size && !finishInspection(task)) {
            m_inspecting.pop_front();
        }
    }
    return false;
}

// The cheap part of the inspection: what is on disk. True when there is something to hash (the inspection
// is set up), false when the task is decided already.
bool Fetcher::startInspection(DownloadTask& task) {
    auto opened = PartFile::open(m_dir, task.file.name);
    if (!opened) {
        failFile(task, opened.error().message);
        return false;
    }
    const auto finalSize = opened->finalSize();
    if (!finalSize) {
        failFile(task, finalSize.error().message);
        return false;
    }
    if (*finalSize && !task.file.sha256.empty() && (!task.file.size || **finalSize == *task.file.size)) {
        if (auto file = opened->openFinal()) {
            task.part = std::move(*opened);
            auto& in = task.inspection.emplace();
            in.final = true;
            in.finalFile = std::move(*file);
            in.size = **finalSize;
            return true;
        }
        // A final file with other content (or unreadable) is not overwritten silently: it is replaced only by
        // a download that verifies.
    }
    return startPartInspection(task, std::move(*opened));
}

bool Fetcher::startPartInspection(DownloadTask& task, PartFile part) {
    auto& state = m_report.files[task.index].state;
    const auto partSize = part.existingPartSize();
    if (!partSize) {
        failFile(task, partSize.error().message);
        return false;
    }
    if (!*partSize || **partSize == 0) {
        state = FileState::Queued;
        return false;
    }
    if (task.file.size && **partSize > *task.file.size) {
        if (auto discarded = part.discard(); !discarded) {
            failFile(task, discarded.error().message);
            return false;
        }
        state = FileState::Queued;
        return false;
    }
    const auto size = part.openPart();
    if (!size) {
        failFile(task, size.error().message);
        return false;
    }
    task.part = std::move(part);
    task.inspection.emplace().size = *size;
    return true;
}

// Everything of the inspection is hashed: decide. True when there is more to hash (the part file, after a
// finished file that did not verify).
bool Fetcher::finishInspection(DownloadTask& task) {
    auto& report = m_report.files[task.index];
    DownloadTask::Inspection in = std::move(*task.inspection);
    task.inspection.reset();
    PartFile part = std::move(*task.part);
    task.part.reset();
    if (in.final) {
        if (in.hash.hexDigest() == task.file.sha256) {
            task.offset = in.size;
            report.bytesDone = task.offset;
            report.size = task.offset;
            fileDone(task, FileState::AlreadyPresent);
            return false;
        }
        return startPartInspection(task, std::move(part));
    }
    task.hash = std::move(in.hash);
    task.offset = in.size;
    report.bytesDone = task.offset;
    report.state = FileState::Queued;
    if (task.file.size && task.offset == *task.file.size && !task.file.sha256.empty()) {
        if (task.hash.hexDigestSoFar() != task.file.sha256) {
            // Whole but wrong: no request can fix these bytes; start over without counting an attempt.
            ++m_report.totals.hashMismatches;
            if (auto discarded = part.discard(); !discarded) {
                failFile(task, discarded.error().message);
                return false;
            }
            task.hash = Sha256();
            task.offset = 0;
            report.bytesDone = 0;
            return false;
        }
        // Killed between the last byte and the rename: finish it here, without a request.
        task.part = std::move(part);
        report.resumedFrom = task.offset;
        finishFile(task);
    }
    return false;
}

void Fetcher::cancel() {
    if (m_report.finished) {
        return;
    }
    m_report.cancelled = true;
    for (auto& connection : m_connections) {
        connection->fail(Error{"the download was cancelled"});
    }
    m_closed.clear();
    m_streams.clear();
    m_inspecting.clear();
    for (auto& task : m_tasks) {
        task.inspection.reset();
        if (task.part) {
            task.part->close();
            task.part.reset();
        }
        task.connection = nullptr;
        if (!isFinal(m_report.files[task.index].state)) {
            m_report.files[task.index].state = FileState::Cancelled;
        }
    }
    finish();
}

template <typename Body>
void Fetcher::guarded(Body&& body) noexcept {
    try {
        body();
    } catch (const std::exception& e) {
        // Only allocation can throw here; nothing sensible is left to do but stop.
        for (auto& task : m_tasks) {
            if (!isFinal(m_report.files[task.index].state)) {
                m_report.files[task.index].error = std::string("internal error: ") + e.what();
            }
        }
        cancel();
    } catch (...) {
        cancel();
    }
}

int Fetcher::onKickEvent(sd_event_source*, void* userdata) noexcept {
    auto* self = static_cast<Fetcher*>(userdata);
    self->guarded([self] { self->runKick(); });
    return 0;
}

int Fetcher::onTimerEvent(sd_event_source*, std::uint64_t, void* userdata) noexcept {
    auto* self = static_cast<Fetcher*>(userdata);
    self->guarded([self] { self->tick(); });
    return 0;
}

int Fetcher::onWakeEvent(sd_event_source*, std::uint64_t, void* userdata) noexcept {
    auto* self = static_cast<Fetcher*>(userdata);
    self->guarded([self] { self->kick(); });
    return 0;
}

void Fetcher::kick() {
    if (m_kick && !m_report.finished) {
        sd_event_source_set_enabled(m_kick.get(), SD_EVENT_ONESHOT);
    }
}

// Everything that changes the set of streams runs here, outside the connections' callbacks.
void Fetcher::runKick() {
    if (m_report.finished) {
        return;
    }
    const bool moreToInspect = inspectSome();
    while (!m_closed.empty()) {
        const ClosedStream closed = m_closed.front();
        m_closed.pop_front();
        processClosed(closed);
    }
    reap();
    schedule();
    armWake();
    if (moreToInspect) {
        kick(); // the next piece after the loop's other events
    }
    refreshTotals();
    const bool allFinal = std::all_of(m_tasks.begin(), m_tasks.end(), [this](const DownloadTask& task) {
        return isFinal(m_report.files[task.index].state);
    });
    if (allFinal && m_closed.empty()) {
        finish();
    }
}

void Fetcher::schedule() {
    const auto now = Clock::now();
    std::size_t active = 0;
    std::vector<PendingDownload> pending;
    for (auto& task : m_tasks) {
        auto& state = m_report.files[task.index].state;
        if (state == FileState::Waiting && task.readyAt <= now) {
            state = FileState::Queued;
        }
        if (state == FileState::Active) {
            ++active;
        } else if (state == FileState::Queued) {
            pending.push_back(PendingDownload{task.index, task.remaining()});
        }
    }
    if (active >= m_options.streams || pending.empty()) {
        return;
    }
    for (const std::size_t index : pickNext(pending, pending.size(), m_options.order)) {
        if (active >= m_options.streams) {
            break;
        }
        DownloadTask& task = m_tasks[index];
        std::string error;
        FetcherConnection* connection = connectionFor(task, error);
        if (!connection) {
            attemptFailed(task, {AttemptFailure::Retry, error, std::nullopt});
            continue;
        }
        if (connection->activeStreams() >= std::min(connection->maxConcurrentStreams(), m_options.streams)) {
            continue; // this server's limit; a stream closing there calls schedule() again
        }
        if (startAttempt(task, *connection)) {
            ++active;
        }
    }
}

FetcherConnection* Fetcher::connectionFor(DownloadTask& task, std::string& error) {
    const std::string key = FetcherConnection::originKey(task.url());
    if (const auto it = m_current.find(key); it != m_current.end() && it->second->acceptsRequests()) {
        return it->second;
    }
    if (task.url().scheme == "https" && !m_tls) {
        // Only a redirect gets here: a manifest with https URLs has its TLS set up at create().
        auto tls = TlsContext::create(m_options.tls);
        if (!tls) {
            error = tls.error().message;
            return nullptr;
        }
        m_tls = std::move(*tls);
    }
    ConnectionOptions connectionOptions;
    connectionOptions.connectTimeout = m_options.connectTimeout;
    auto opened =
        FetcherConnection::open(m_event.get(), task.url(), m_tls, *this, sessionOptions(), connectionOptions);
    if (!opened) {
        error = opened.error().message;
        return nullptr;
    }
    ++m_report.totals.connectionsOpened;
    FetcherConnection* connection = opened->get();
    m_connections.push_back(std::move(*opened));
    m_current[key] = connection;
    return connection;
}

bool Fetcher::startAttempt(DownloadTask& task, FetcherConnection& connection) {
    auto& report = m_report.files[task.index];
    if (!task.part) {
        auto opened = PartFile::open(m_dir, task.file.name);
        if (!opened) {
            failFile(task, opened.error().message);
            return false;
        }
        task.part = std::move(*opened);
    }
    const auto size = task.part->openPart();
    if (!size) {
        failFile(task, size.error().message);
        return false;
    }
    if (*size != task.offset) {
        // Not what was hashed (changed behind our back, or a fresh file): only a prefix we hashed is trusted.
        if (auto emptied = task.part->truncate(); !emptied) {
            failFile(task, emptied.error().message);
            return false;
        }
        task.hash = Sha256();
        task.offset = 0;
    }

    const Url& url = task.url();
    Http2Session::Request request;
    request.scheme = url.scheme;
    request.authority = url.authority();
    request.path = url.path;
    // RFC 9218: one urgency for all, non-incremental, so the server sends streams one after the other in
    // the order they were opened, and opening the smallest first gives SRPT service.
    request.headers.emplace_back("priority", "u=3");
    request.headers.emplace_back("user-agent", "nicer");
    if (task.offset > 0) {
        request.headers.emplace_back("range", rangeFrom(task.offset));
    }
    auto stream = connection.submit(request);
    if (!stream) {
        task.part->close();
        attemptFailed(task, {AttemptFailure::Retry, stream.error().message, std::nullopt});
        return false;
    }
    task.connection = &connection;
    task.stream = *stream;
    task.mode = DownloadTask::Mode::AwaitingHeaders;
    task.bodyEnd.reset();
    task.failure.reset();
    task.attemptReceived = 0;
    task.attemptConsumed = 0;
    m_streams[{&connection, *stream}] = task.index;

    report.state = FileState::Active;
    if (!task.redirect) {
        ++report.attempts; // a request that follows a redirect belongs to the attempt that led to it
    }
    if (!task.requested) {
        task.requested = true;
        report.resumedFrom = task.offset;
    }
    ++m_report.totals.streamsOpened;
    return true;
}

DownloadTask* Fetcher::taskOf(FetcherConnection& connection, std::int32_t stream) {
    const auto it = m_streams.find({&connection, stream});
    return it == m_streams.end() ? nullptr : &m_tasks[it->second];
}

void Fetcher::resetAttempt(DownloadTask& task, DownloadTask::Failure failure) {
    task.mode = DownloadTask::Mode::Failing;
    task.failure = std::move(failure);
    if (task.connection) {
        task.connection->resetStream(task.stream);
    }
}

void Fetcher::onResponseHeaders(FetcherConnection& connection, std::int32_t stream, int status,
                                const Http2Session::Headers& headers) {
    DownloadTask* found = taskOf(connection, stream);
    if (!found || found->mode != DownloadTask::Mode::AwaitingHeaders) {
        return;
    }
    DownloadTask& task = *found;
    task.freeRetriesInARow = 0;

    ResponseFacts facts;
    facts.status = status;
    if (const auto length = header(headers, "content-length")) {
        facts.contentLength = parseContentLength(*length);
    }
    facts.contentRange = header(headers, "content-range");
    facts.location = header(headers, "location");
    const ResponseVerdict verdict = judgeResponse(facts, task.offset, task.file.size);
    if (verdict.fileSize && !task.file.size) {
        task.serverSize = verdict.fileSize;
        m_report.files[task.index].size = verdict.fileSize;
    }

    switch (verdict.action) {
    case ResponseAction::Restart:
        ++m_report.totals.rangeIgnored;
        if (auto emptied = task.part->truncate(); !emptied) {
            resetAttempt(task, {AttemptFailure::Local, emptied.error().message, std::nullopt});
            return;
        }
        task.hash = Sha256();
        task.offset = 0;
        m_report.files[task.index].bytesDone = 0;
        [[fallthrough]];
    case ResponseAction::Write:
        task.mode = DownloadTask::Mode::Writing;
        if (verdict.bodyLength) {
            task.bodyEnd = verdict.bodyOffset + *verdict.bodyLength;
        }
        if (m_windowTarget != 0) {
            // The stream started with the SETTINGS window of its connection, which may be out of date.
            const std::int32_t streams[] = {stream};
            connection.setWindows(connectionWindow(), streams, streamWindow());
        }
        return;
    case ResponseAction::Verify:
        task.mode = DownloadTask::Mode::Verify;
        connection.resetStream(stream); // the body of a 416 is of no use
        return;
    case ResponseAction::Discard:
        resetAttempt(task, {AttemptFailure::Discard, verdict.reason, std::nullopt});
        return;
    case ResponseAction::Retry: {
        std::optional<std::chrono::seconds> retryAfter;
        if (const auto value = header(headers, "retry-after")) {
            retryAfter = parseRetryAfter(*value, std::chrono::system_clock::now());
        }
        resetAttempt(task, {AttemptFailure::Retry, verdict.reason, retryAfter});
        return;
    }
    case ResponseAction::NextMirror:
        resetAttempt(task, {AttemptFailure::NextMirror, verdict.reason, std::nullopt});
        return;
    case ResponseAction::Redirect:
        resetAttempt(task, redirectOf(task, verdict));
        return;
    }
}

void Fetcher::consume(DownloadTask& task, std::size_t n) {
    if (task.connection && n > 0) {
        task.attemptConsumed += task.connection->consume(task.stream, n);
    }
}

void Fetcher::onData(FetcherConnection& connection, std::int32_t stream, std::span<const std::uint8_t> data) {
    DownloadTask* found = taskOf(connection, stream);
    const auto now = Clock::now();
    m_received += data.size();
    m_report.totals.bytesDownloaded += data.size();
    if (!found) {
        m_limiter.charge(data.size(), now);
        connection.consume(stream, data.size());
        return;
    }
    DownloadTask& task = *found;
    task.attemptReceived += data.size();
    m_report.files[task.index].bytesDownloaded += data.size();
    if (task.mode != DownloadTask::Mode::Writing) {
        // Bytes of an attempt that is being given up: not ours to keep, but they took the link.
        m_limiter.charge(data.size(), now);
        consume(task, data.size());
        return;
    }
    const std::uint64_t end = task.offset + data.size();
    const auto limit = task.bodyEnd ? task.bodyEnd : task.expectedSize();
    if (limit && end > *limit) {
        resetAttempt(task,
                     {AttemptFailure::Retry,
                      "the server sent more than the " + sizeText(*limit) + " it announced", std::nullopt});
        m_limiter.charge(data.size(), now);
        consume(task, data.size());
        return;
    }
    // Written before it is acknowledged: what the server may send next is always backed by bytes on disk,
    // and the part file stays an in-order prefix whatever happens to the process.
    if (auto written = task.part->append(data); !written) {
        resetAttempt(task, {AttemptFailure::Local, written.error().message, std::nullopt});
        return;
    }
    task.hash.update(data.data(), data.size());
    task.offset = end;
    m_report.files[task.index].bytesDone = end;
    consume(task, static_cast<std::size_t>(m_limiter.take(connection.unconsumed(stream), now)));
}

void Fetcher::onStreamClosed(FetcherConnection& connection, std::int32_t stream, StreamEnd end) {
    const auto it = m_streams.find({&connection, stream});
    if (it == m_streams.end()) {
        return;
    }
    const std::size_t index = it->second;
    m_streams.erase(it);
    DownloadTask& task = m_tasks[index];
    // The session released what we had not acknowledged; it still counts against the rate.
    m_limiter.charge(task.attemptReceived - std::min(task.attemptReceived, task.attemptConsumed),
                     Clock::now());
    m_closed.push_back(ClosedStream{index, &connection, end});
    kick();
}

void Fetcher::onPingAck(FetcherConnection& /*connection*/, std::chrono::nanoseconds rtt) {
    // Windows follow the smallest RTT seen: the latest includes the queue this download builds itself, and
    // windows sized from it would grow with the queue they cause.
    m_lastRtt = m_lastRtt ? std::min(*m_lastRtt, rtt) : rtt;
    m_newRtt = rtt;
}

void Fetcher::onConnectionChanged(FetcherConnection& /*connection*/) {
    kick();
}

void Fetcher::processClosed(const ClosedStream& closed) {
    DownloadTask& task = m_tasks[closed.task];
    task.connection = nullptr;
    task.stream = 0;
    const StreamEnd& end = closed.end;
    FetcherConnection* connection = closed.connection;

    if (task.failure) {
        if (task.part) {
            task.part->close();
        }
        attemptFailed(task, *task.failure);
        return;
    }
    if (task.mode == DownloadTask::Mode::Verify ||
        (end.kind == StreamEnd::Kind::Complete && task.mode == DownloadTask::Mode::Writing)) {
        finishFile(task);
        return;
    }
    if (task.part) {
        task.part->close();
    }
    std::string reason = end.describe();
    if ((end.kind == StreamEnd::Kind::ConnectionClosed || end.kind == StreamEnd::Kind::NotProcessed) &&
        connection->error()) {
        reason = connection->error()->message;
    }
    if (end.kind == StreamEnd::Kind::Complete) {
        reason = "the response ended without a usable header block";
    }
    // The server never acted on the request (GOAWAY, REFUSED_STREAM): ask again on a new connection
    // without counting a failure. A connection that never came up is a failure, though (e.g. TLS).
    if (end.retryable() && connection->everConnected() && task.freeRetriesInARow < m_options.freeRetries) {
        ++task.freeRetriesInARow;
        ++m_report.totals.retries;
        m_report.files[task.index].state = FileState::Queued;
        return;
    }
    // A server that cannot be verified (TLS) or does not speak HTTP/2 will not change by waiting.
    const bool permanent = !connection->everConnected() && connection->failedPermanently();
    attemptFailed(task,
                  {permanent ? AttemptFailure::NextMirror : AttemptFailure::Retry, reason, std::nullopt});
}

void Fetcher::finishFile(DownloadTask& task) {
    auto& report = m_report.files[task.index];
    const auto expected = task.expectedSize();
    if (expected && task.offset != *expected) {
        if (task.part) {
            task.part->close();
        }
        // A short body is still a prefix: the next attempt resumes from it.
        attemptFailed(
            task, {AttemptFailure::Retry,
                   "the response ended after " + std::to_string(task.offset) + " of " + sizeText(*expected),
                   std::nullopt});
        return;
    }
    const std::string digest = task.hash.hexDigestSoFar();
    if (!task.file.sha256.empty() && digest != task.file.sha256) {
        ++m_report.totals.hashMismatches;
        std::string reason = "SHA-256 mismatch: the download hashes to " + digest +
                             " but the manifest says " + task.file.sha256 + "; it was discarded";
        if (task.part) {
            if (auto discarded = task.part->discard(); !discarded) {
                reason += " (" + discarded.error().message + ")";
            }
        }
        task.hash = Sha256();
        task.offset = 0;
        report.bytesDone = 0;
        attemptFailed(task, {AttemptFailure::Retry, reason, std::nullopt});
        return;
    }
    if (!task.part) {
        auto opened = PartFile::open(m_dir, task.file.name);
        if (!opened) {
            failFile(task, opened.error().message);
            return;
        }
        task.part = std::move(*opened);
        if (auto size = task.part->openPart(); !size) {
            failFile(task, size.error().message);
            return;
        }
    }
    if (auto committed = task.part->commit(); !committed) {
        task.part.reset();
        failFile(task, committed.error().message);
        return;
    }
    task.part.reset();
    if (task.file.sha256.empty()) {
        report.sha256 = digest;
    }
    report.size = task.offset;
    report.bytesDone = task.offset;
    report.mirrorUsed = task.requested ? task.url().toString() : std::string();
    report.error.clear();
    fileDone(task, FileState::Ok);
}

void Fetcher::attemptFailed(DownloadTask& task, DownloadTask::Failure failure) {
    auto& report = m_report.files[task.index];
    task.failure.reset();
    if (failure.kind == AttemptFailure::Redirect) {
        task.redirect = std::move(failure.location);
        ++task.redirects;
        ++m_report.totals.redirects;
        report.state = FileState::Queued;
        return;
    }
    const std::string where = task.url().toString();
    report.error = where + ": " + failure.reason;
    task.redirect.reset();
    task.redirects = 0;
    switch (failure.kind) {
    case AttemptFailure::Local:
        failFile(task, failure.reason);
        return;
    case AttemptFailure::NextMirror:
        nextMirror(task, report.error);
        return;
    case AttemptFailure::Discard:
        if (task.part) {
            (void)task.part->discard();
        } else if (auto opened = PartFile::open(m_dir, task.file.name)) {
            (void)opened->discard();
        }
        task.hash = Sha256();
        task.offset = 0;
        report.bytesDone = 0;
        break;
    case AttemptFailure::Retry:
    case AttemptFailure::Redirect:
        break;
    }
    ++task.attemptsOnMirror;
    if (task.attemptsOnMirror >= m_options.attemptsPerMirror) {
        nextMirror(task, report.error);
        return;
    }
    ++m_report.totals.retries;
    const auto delay = retryDelay(task.backoff.next(), failure.retryAfter);
    task.readyAt = Clock::now() + delay;
    report.state = FileState::Waiting;
}

void Fetcher::nextMirror(DownloadTask& task, const std::string& reason) {
    ++task.mirror;
    task.attemptsOnMirror = 0;
    task.freeRetriesInARow = 0;
    task.backoff.reset();
    if (task.mirror >= task.mirrors.size()) {
        task.mirror = task.mirrors.size() - 1; // url() stays valid for messages
        const std::size_t count = task.mirrors.size();
        failFile(task, reason + (count > 1 ? " (all " + std::to_string(count) + " mirrors failed)" : ""));
        return;
    }
    ++m_report.totals.retries;
    m_report.files[task.index].state = FileState::Queued;
}

void Fetcher::failFile(DownloadTask& task, const std::string& reason) {
    if (task.part) {
        task.part->close();
        task.part.reset();
    }
    m_report.files[task.index].error = reason;
    fileDone(task, FileState::Failed);
}

void Fetcher::fileDone(DownloadTask& task, FileState state) {
    m_report.files[task.index].state = state;
    if (m_observer) {
        refreshTotals();
        m_observer->onFileDone(m_report, task.index);
    }
}

void Fetcher::reap() {
    for (auto it = m_connections.begin(); it != m_connections.end();) {
        FetcherConnection* connection = it->get();
        if (!connection->closed()) {
            ++it;
            continue;
        }
        if (const auto current = m_current.find(connection->origin());
            current != m_current.end() && current->second == connection) {
            m_current.erase(current);
        }
        it = m_connections.erase(it);
    }
}

void Fetcher::armWake() {
    std::optional<Clock::time_point> earliest;
    for (const auto& task : m_tasks) {
        if (m_report.files[task.index].state == FileState::Waiting) {
            earliest = earliest ? std::min(*earliest, task.readyAt) : task.readyAt;
        }
    }
    if (!earliest) {
        sd_event_source_set_enabled(m_wake.get(), SD_EVENT_OFF);
        return;
    }
    const auto delay = std::max(Clock::duration::zero(), *earliest - Clock::now());
    std::uint64_t now = 0;
    sd_event_now(m_event.get(), CLOCK_MONOTONIC, &now);
    sd_event_source_set_time(m_wake.get(), now + toUsec(delay));
    sd_event_source_set_enabled(m_wake.get(), SD_EVENT_ONESHOT);
}

bool Fetcher::manualFlowControl() const {
    return m_options.maxRate.has_value() || m_options.rateController != nullptr;
}

std::uint32_t Fetcher::connectionWindow() const {
    return m_windowTarget != 0 ? m_windowTarget : m_options.session.connectionWindow;
}

std::uint32_t Fetcher::streamWindow() const {
    return m_windowTarget != 0 ? std::min(m_windowTarget, m_options.session.streamWindow)
                               : m_options.session.streamWindow;
}

Http2Session::Options Fetcher::sessionOptions() const {
    Http2Session::Options options = m_options.session;
    options.manualFlowControl = manualFlowControl();
    options.connectionWindow = connectionWindow();
    options.streamWindow = streamWindow();
    return options;
}

void Fetcher::applyRate(std::optional<double> rate, Clock::time_point now) {
    m_limiter.setRate(rate, now);
    m_report.totals.rateLimit = rate;
    std::uint32_t target = 0;
    if (rate) {
        const auto rtt = m_lastRtt.value_or(std::chrono::nanoseconds(0));
        const double seconds = std::max(std::chrono::duration<double>(2 * rtt).count(),
                                        std::chrono::duration<double>(kMinWindowTime).count());
        const double wanted = std::clamp(*rate * seconds, static_cast<double>(kMinWindow),
                                         static_cast<double>(m_options.session.connectionWindow));
        target = static_cast<std::uint32_t>(wanted);
    }
    const bool change = (target == 0) != (m_windowTarget == 0) ||
                        (target != 0 && (target > m_windowTarget * kWindowHysteresis ||
                                         target * kWindowHysteresis < m_windowTarget));
    if (!change) {
        return;
    }
    m_windowTarget = target;
    for (auto& connection : m_connections) {
        std::vector<std::int32_t> streams;
        for (const auto& [key, index] : m_streams) {
            if (key.first == connection.get()) {
                streams.push_back(key.second);
            }
        }
        connection->setWindows(connectionWindow(), streams, streamWindow());
    }
}

void Fetcher::armTick() {
    if (m_report.finished) {
        sd_event_source_set_enabled(m_tick.get(), SD_EVENT_OFF);
        return;
    }
    const auto interval = m_limiter.rate() ? std::min(m_options.pacingInterval, m_options.sampleInterval)
                                           : m_options.sampleInterval;
    std::uint64_t now = 0;
    sd_event_now(m_event.get(), CLOCK_MONOTONIC, &now);
    sd_event_source_set_time(m_tick.get(), now + toUsec(interval));
    sd_event_source_set_enabled(m_tick.get(), SD_EVENT_ONESHOT);
}

void Fetcher::tick() {
    const auto now = Clock::now();
    if (m_limiter.rate()) {
        pace(now);
    }
    if (now - m_lastSample >= m_options.sampleInterval) {
        sample(now);
    }
    armTick();
}

// Acknowledges withheld bytes as the bucket refills, round robin over the streams so none starves.
void Fetcher::pace(Clock::time_point now) {
    std::vector<DownloadTask*> waiting;
    std::uint64_t total = 0;
    for (const auto& [key, index] : m_streams) {
        DownloadTask& task = m_tasks[index];
        const std::size_t pending = key.first->unconsumed(key.second);
        if (pending > 0) {
            waiting.push_back(&task);
            total += pending;
        }
    }
    if (waiting.empty()) {
        return;
    }
    std::uint64_t granted = m_limiter.take(total, now);
    const std::size_t start = m_paceCursor++ % waiting.size();
    for (std::size_t i = 0; i < waiting.size() && granted > 0; ++i) {
        DownloadTask& task = *waiting[(start + i) % waiting.size()];
        const std::size_t pending = task.connection->unconsumed(task.stream);
        const auto share = static_cast<std::size_t>(std::min<std::uint64_t>(pending, granted));
        consume(task, share);
        granted -= share;
    }
}

std::optional<double> Fetcher::allowedRate(Clock::time_point now) {
    std::optional<double> rate = m_options.maxRate;
    if (m_options.rateController) {
        LinkSample link;
        link.time = now;
        link.receivedBytes = m_received;
        link.rtt = std::exchange(m_newRtt, std::nullopt);
        if (auto rx = totalReceivedBytes(m_options.procNetDev); rx) {
            link.interfaceRxBytes = *rx;
        }
        if (const auto nice = m_options.rateController->onSample(link)) {
            rate = rate ? std::min(*rate, *nice) : *nice;
        }
    }
    return rate;
}

void Fetcher::sample(Clock::time_point now) {
    m_lastSample = now;
    for (auto& connection : m_connections) {
        connection->checkStall(now, m_options.stallTimeout);
    }
    if (m_options.rateController) {
        applyRate(allowedRate(now), now);
        // The next RTT for the controller: a PING on the busiest connection, queued behind its data.
        FetcherConnection* busiest = nullptr;
        for (auto& connection : m_connections) {
            if (!connection->closed() &&
                (!busiest || connection->activeStreams() > busiest->activeStreams())) {
                busiest = connection.get();
            }
        }
        if (busiest && busiest->activeStreams() > 0) {
            busiest->ping();
        }
    }
    m_rateWindow.emplace_back(now, m_received);
    while (m_rateWindow.size() > 2 && now - m_rateWindow.front().first > kRateWindow) {
        m_rateWindow.pop_front();
    }
    const auto span = std::chrono::duration<double>(now - m_rateWindow.front().first).count();
    m_report.totals.currentRate =
        span > 0 ? static_cast<double>(m_received - m_rateWindow.front().second) / span : 0.0;
    refreshTotals();
    if (m_observer && !m_report.finished) {
        m_observer->onProgress(m_report);
    }
}

void Fetcher::refreshTotals() {
    auto& t = m_report.totals;
    t.filesOk = t.filesAlreadyPresent = t.filesFailed = t.filesUnverified = 0;
    t.bytesTotal = t.bytesDone = 0;
    t.activeStreams = m_streams.size();
    for (const auto& file : m_report.files) {
        t.filesOk += file.state == FileState::Ok;
        t.filesAlreadyPresent += file.state == FileState::AlreadyPresent;
        t.filesFailed += file.state == FileState::Failed;
        t.filesUnverified += file.state == FileState::Ok && !file.verified;
        t.bytesTotal += file.size.value_or(0);
        t.bytesDone += file.bytesDone;
    }
    if (m_started) {
        t.elapsed = Clock::now() - m_startTime;
    }
}

void Fetcher::finish() {
    if (m_report.finished) {
        return;
    }
    m_report.finished = true;
    for (auto& connection : m_connections) {
        connection->shutdown();
    }
    // Nothing is written any more: the next fetch into this directory may start while this object lives.
    m_dirLock.reset();
    if (m_tick) {
        sd_event_source_set_enabled(m_tick.get(), SD_EVENT_OFF);
    }
    if (m_wake) {
        sd_event_source_set_enabled(m_wake.get(), SD_EVENT_OFF);
    }
    if (m_kick) {
        sd_event_source_set_enabled(m_kick.get(), SD_EVENT_OFF);
    }
    refreshTotals();
    if (m_observer) {
        m_observer->onFinished(m_report);
    }
}

} // namespace nicer::net
