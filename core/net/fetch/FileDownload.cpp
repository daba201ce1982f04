#include "net/fetch/FileDownload.h"

#include "net/fetch/DownloadResponse.h"
#include "net/http2/HttpHeaders.h"

namespace nicer::net {

namespace {

// Redirects followed in a row before a mirror is given up; browsers allow 20, curl -L 50.
constexpr int kMaxRedirects = 10;

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

// What a redirect response means for @p download: follow it, or give the mirror up and say why.
FileDownload::Failure redirectOf(const FileDownload& download, const ResponseVerdict& verdict) {
    auto target = resolveUrl(download.url(), verdict.location);
    if (!target) {
        return {AttemptFailure::NextMirror,
                verdict.reason + " with a Location nicer cannot follow: " + target.error().message};
    }
    const std::string to = verdict.reason + " to " + target->toString();
    if (download.redirects >= kMaxRedirects) {
        return {AttemptFailure::NextMirror, to + ", redirect number " +
                                                std::to_string(download.redirects + 1) +
                                                " in a row; giving this mirror up (a redirect loop?)"};
    }
    if (download.url().scheme == "https" && target->scheme == "http") {
        return {AttemptFailure::NextMirror, to + "; a redirect from https to http is not followed, it would "
                                                 "drop the server's authentication and encryption"};
    }
    return {AttemptFailure::Redirect, to, std::nullopt, std::move(*target)};
}

} // namespace

FileDownload::FileDownload(std::size_t position, MetalinkFile manifestFile, std::filesystem::path target,
                           std::vector<Url> urls, Backoff retryBackoff, Policy policy)
    : index(position)
    , file(std::move(manifestFile))
    , mirrors(std::move(urls))
    , backoff(std::move(retryBackoff))
    , m_policy(std::move(policy)) {
    report.name = file.name;
    report.path = std::move(target);
    report.size = file.size;
    report.sha256 = file.sha256;
    report.verified = !file.sha256.empty();
}

std::optional<std::uint64_t> FileDownload::remaining() const {
    const auto size = expectedSize();
    return size ? std::optional<std::uint64_t>(*size > offset ? *size - offset : 0) : std::nullopt;
}

void FileDownload::restartFromZero() {
    hash = Sha256();
    offset = 0;
    report.bytesDone = 0;
}

std::optional<Http2Session::Request> FileDownload::nextRequest() {
    if (!part) {
        auto opened = PartFile::open(m_policy.dir, file.name);
        if (!opened) {
            fail(opened.error().message);
            return std::nullopt;
        }
        part = std::move(*opened);
    }
    const auto size = part->openPart();
    if (!size) {
        fail(size.error().message);
        return std::nullopt;
    }
    if (*size != offset) {
        // Not what was hashed (changed behind our back, or a fresh file): only a prefix we hashed is trusted.
        if (auto emptied = part->truncate(); !emptied) {
            fail(emptied.error().message);
            return std::nullopt;
        }
        hash = Sha256();
        offset = 0;
    }
    const Url& target = url();
    Http2Session::Request request;
    request.scheme = target.scheme;
    request.authority = target.authority();
    request.path = target.path;
    // RFC 9218: one urgency for all, non-incremental, so the server sends streams one after the other in
    // the order they were opened, and opening the smallest first gives SRPT service.
    request.headers.emplace_back("priority", "u=3");
    request.headers.emplace_back("user-agent", "nicer");
    if (offset > 0) {
        request.headers.emplace_back("range", rangeFrom(offset));
    }
    return request;
}

void FileDownload::attemptStarted(FetcherConnection* on, std::int32_t streamId) {
    connection = on;
    stream = streamId;
    mode = Mode::AwaitingHeaders;
    bodyEnd.reset();
    failure.reset();
    attemptReceived = 0;
    attemptConsumed = 0;
    report.state = FileState::Active;
    if (!redirect) {
        ++report.attempts; // a request that follows a redirect belongs to the attempt that led to it
    }
    if (!requested) {
        requested = true;
        report.resumedFrom = offset;
    }
}

void FileDownload::failAttempt(Failure why) {
    mode = Mode::Failing;
    failure = std::move(why);
}

FileDownload::AfterHeaders FileDownload::onHeaders(int status, const Http2Session::Headers& headers) {
    if (mode != Mode::AwaitingHeaders) {
        return AfterHeaders::Ignore;
    }
    freeRetriesInARow = 0;

    ResponseFacts facts;
    facts.status = status;
    if (const auto length = header(headers, "content-length")) {
        facts.contentLength = parseContentLength(*length);
    }
    facts.contentRange = header(headers, "content-range");
    facts.location = header(headers, "location");
    const ResponseVerdict verdict = judgeResponse(facts, offset, file.size);
    if (verdict.fileSize && !file.size) {
        serverSize = verdict.fileSize;
        report.size = verdict.fileSize;
    }

    switch (verdict.action) {
    case ResponseAction::Restart:
        ++counters.rangeIgnored;
        if (auto emptied = part->truncate(); !emptied) {
            failAttempt({AttemptFailure::Local, emptied.error().message});
            return AfterHeaders::Reset;
        }
        restartFromZero();
        [[fallthrough]];
    case ResponseAction::Write:
        mode = Mode::Writing;
        if (verdict.bodyLength) {
            bodyEnd = verdict.bodyOffset + *verdict.bodyLength;
        }
        return AfterHeaders::Write;
    case ResponseAction::Verify:
        mode = Mode::Verify;
        return AfterHeaders::Reset; // the body of a 416 is of no use
    case ResponseAction::Discard:
        failAttempt({AttemptFailure::Discard, verdict.reason});
        return AfterHeaders::Reset;
    case ResponseAction::Retry: {
        std::optional<std::chrono::seconds> retryAfter;
        if (const auto value = header(headers, "retry-after")) {
            retryAfter = parseRetryAfter(*value, std::chrono::system_clock::now());
        }
        failAttempt({AttemptFailure::Retry, verdict.reason, retryAfter});
        return AfterHeaders::Reset;
    }
    case ResponseAction::NextMirror:
        failAttempt({AttemptFailure::NextMirror, verdict.reason});
        return AfterHeaders::Reset;
    case ResponseAction::Redirect:
        failAttempt(redirectOf(*this, verdict));
        return AfterHeaders::Reset;
    }
    return AfterHeaders::Ignore;
}

FileDownload::AfterData FileDownload::onData(std::span<const std::uint8_t> data) {
    attemptReceived += data.size();
    report.bytesDownloaded += data.size();
    if (mode != Mode::Writing) {
        // Bytes of an attempt that is being given up: not ours to keep, but they took the link.
        return AfterData::Discard;
    }
    const std::uint64_t end = offset + data.size();
    const auto limit = bodyEnd ? bodyEnd : expectedSize();
    if (limit && end > *limit) {
        failAttempt(
            {AttemptFailure::Retry, "the server sent more than the " + sizeText(*limit) + " it announced"});
        return AfterData::ResetAndDiscard;
    }
    // Written before it is acknowledged: what the server may send next is always backed by bytes on disk,
    // and the part file stays an in-order prefix whatever happens to the process.
    if (auto written = part->append(data); !written) {
        failAttempt({AttemptFailure::Local, written.error().message});
        return AfterData::Reset;
    }
    hash.update(data.data(), data.size());
    offset = end;
    report.bytesDone = end;
    return AfterData::Pace;
}

FileDownload::Outcome FileDownload::onClosed(const StreamEnd& end, const ConnectionFacts& facts,
                                             Clock::time_point now) {
    connection = nullptr;
    stream = 0;
    if (failure) {
        if (part) {
            part->close();
        }
        return attemptFailed(*failure, now);
    }
    if (mode == Mode::Verify || (end.kind == StreamEnd::Kind::Complete && mode == Mode::Writing)) {
        return finish(now);
    }
    if (part) {
        part->close();
    }
    std::string reason = end.describe();
    if ((end.kind == StreamEnd::Kind::ConnectionClosed || end.kind == StreamEnd::Kind::NotProcessed) &&
        facts.error) {
        reason = *facts.error;
    }
    if (end.kind == StreamEnd::Kind::Complete) {
        reason = "the response ended without a usable header block";
    }
    // The server never acted on the request (GOAWAY, REFUSED_STREAM): ask again on a new connection
    // without counting a failure. A connection that never came up is a failure, though (e.g. TLS).
    if (end.retryable() && facts.everConnected && freeRetriesInARow < m_policy.freeRetries) {
        ++freeRetriesInARow;
        ++counters.retries;
        report.state = FileState::Queued;
        return Outcome::Continue;
    }
    // A server that cannot be verified (TLS) or does not speak HTTP/2 will not change by waiting.
    const bool permanent = !facts.everConnected && facts.failedPermanently;
    return attemptFailed({permanent ? AttemptFailure::NextMirror : AttemptFailure::Retry, reason}, now);
}

FileDownload::Outcome FileDownload::finish(Clock::time_point now) {
    const auto expected = expectedSize();
    if (expected && offset != *expected) {
        if (part) {
            part->close();
        }
        // A short body is still a prefix: the next attempt resumes from it.
        return attemptFailed({AttemptFailure::Retry, "the response ended after " + std::to_string(offset) +
                                                         " of " + sizeText(*expected)},
                             now);
    }
    const std::string digest = hash.hexDigestSoFar();
    if (!file.sha256.empty() && digest != file.sha256) {
        ++counters.hashMismatches;
        std::string reason = "SHA-256 mismatch: the download hashes to " + digest +
                             " but the manifest says " + file.sha256 + "; it was discarded";
        if (part) {
            if (auto discarded = part->discard(); !discarded) {
                reason += " (" + discarded.error().message + ")";
            }
        }
        restartFromZero();
        return attemptFailed({AttemptFailure::Retry, reason}, now);
    }
    if (!part) {
        auto opened = PartFile::open(m_policy.dir, file.name);
        if (!opened) {
            return fail(opened.error().message);
        }
        part = std::move(*opened);
        if (auto size = part->openPart(); !size) {
            return fail(size.error().message);
        }
    }
    if (auto committed = part->commit(); !committed) {
        part.reset();
        return fail(committed.error().message);
    }
    part.reset();
    if (file.sha256.empty()) {
        report.sha256 = digest;
    }
    report.size = offset;
    report.bytesDone = offset;
    report.mirrorUsed = requested ? url().toString() : std::string();
    report.error.clear();
    return done(FileState::Ok);
}

FileDownload::Outcome FileDownload::attemptFailed(Failure why, Clock::time_point now) {
    failure.reset();
    if (why.kind == AttemptFailure::Redirect) {
        redirect = std::move(why.location);
        ++redirects;
        ++counters.redirects;
        report.state = FileState::Queued;
        return Outcome::Continue;
    }
    report.error = url().toString() + ": " + why.reason;
    redirect.reset();
    redirects = 0;
    switch (why.kind) {
    case AttemptFailure::Local:
        return fail(why.reason);
    case AttemptFailure::NextMirror:
        return nextMirror(report.error);
    case AttemptFailure::Discard:
        if (part) {
            (void)part->discard();
        } else if (auto opened = PartFile::open(m_policy.dir, file.name)) {
            (void)opened->discard();
        }
        restartFromZero();
        break;
    case AttemptFailure::Retry:
    case AttemptFailure::Redirect:
        break;
    }
    ++attemptsOnMirror;
    if (attemptsOnMirror >= m_policy.attemptsPerMirror) {
        return nextMirror(report.error);
    }
    ++counters.retries;
    readyAt = now + retryDelay(backoff.next(), why.retryAfter);
    report.state = FileState::Waiting;
    return Outcome::Continue;
}

FileDownload::Outcome FileDownload::nextMirror(const std::string& reason) {
    ++mirror;
    attemptsOnMirror = 0;
    freeRetriesInARow = 0;
    backoff.reset();
    if (mirror >= mirrors.size()) {
        mirror = mirrors.size() - 1; // url() stays valid for messages
        const std::size_t count = mirrors.size();
        return fail(reason + (count > 1 ? " (all " + std::to_string(count) + " mirrors failed)" : ""));
    }
    ++counters.retries;
    report.state = FileState::Queued;
    return Outcome::Continue;
}

FileDownload::Outcome FileDownload::fail(const std::string& reason) {
    if (part) {
        part->close();
        part.reset();
    }
    report.error = reason;
    return done(FileState::Failed);
}

FileDownload::Outcome FileDownload::done(FileState final) {
    report.state = final;
    return Outcome::Done;
}

void FileDownload::countInto(FetchTotals& totals) const {
    totals.filesOk += report.state == FileState::Ok;
    totals.filesAlreadyPresent += report.state == FileState::AlreadyPresent;
    totals.filesFailed += report.state == FileState::Failed;
    totals.filesUnverified += report.state == FileState::Ok && !report.verified;
    totals.bytesTotal += report.size.value_or(0);
    totals.bytesDone += report.bytesDone;
    totals.retries += counters.retries;
    totals.hashMismatches += counters.hashMismatches;
    totals.rangeIgnored += counters.rangeIgnored;
    totals.redirects += counters.redirects;
}

void FileDownload::cancel() {
    if (part) {
        part->close();
        part.reset();
    }
    connection = nullptr;
    if (!isFinal(report.state)) {
        report.state = FileState::Cancelled;
    }
}

} // namespace nicer::net
