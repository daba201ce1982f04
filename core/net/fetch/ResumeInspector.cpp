#include "net/fetch/ResumeInspector.h"

#include <algorithm>

namespace nicer::net {

ResumeInspector::ResumeInspector(std::filesystem::path dir, std::function<void(FileDownload&)> onDone)
    : m_dir(std::move(dir))
    , m_onDone(std::move(onDone)) {}

void ResumeInspector::add(FileDownload& download) {
    download.setState(FileState::Checking);
    m_queue.push_back(&download);
}

void ResumeInspector::clear() {
    m_queue.clear();
    m_current.reset();
}

void ResumeInspector::decided(FileDownload& download, FileDownload::Outcome outcome) {
    if (outcome == FileDownload::Outcome::Done && m_onDone) {
        m_onDone(download);
    }
}

bool ResumeInspector::run(std::uint64_t budget, Clock::time_point now) {
    while (!m_queue.empty()) {
        FileDownload& download = *m_queue.front();
        if (!m_current && !start(download)) {
            m_queue.pop_front(); // decided without hashing
            continue;
        }
        if (budget == 0) {
            return true;
        }
        auto& in = *m_current;
        const std::uint64_t n = std::min(budget, in.size - in.done);
        budget -= n;
        const auto hashed = in.final ? download.part->hashFinal(in.finalFile, in.hash, in.done, n)
                                     : download.part->hashPart(in.hash, in.done, n);
        if (!hashed && !in.final) {
            m_current.reset();
            decided(download, download.fail(hashed.error().message));
            m_queue.pop_front();
            continue;
        }
        if (!hashed) {
            // An unreadable finished file is left alone (only a download that verifies replaces it): look at
            // the part file instead.
            m_current.reset();
            PartFile part = std::move(*download.part);
            download.part.reset();
            if (!startPart(download, std::move(part))) {
                m_queue.pop_front();
            }
            continue;
        }
        in.done += n;
        if (in.done == in.size && !finish(download, now)) {
            m_queue.pop_front();
        }
    }
    return false;
}

// The cheap part: what is on disk. True when there is something to hash, false when the file is decided.
bool ResumeInspector::start(FileDownload& download) {
    auto opened = PartFile::open(m_dir, download.file.name);
    if (!opened) {
        decided(download, download.fail(opened.error().message));
        return false;
    }
    const auto finalSize = opened->finalSize();
    if (!finalSize) {
        decided(download, download.fail(finalSize.error().message));
        return false;
    }
    const auto& file = download.file;
    if (*finalSize && !file.sha256.empty() && (!file.size || **finalSize == *file.size)) {
        if (auto final = opened->openFinal()) {
            download.part = std::move(*opened);
            auto& in = m_current.emplace();
            in.final = true;
            in.finalFile = std::move(*final);
            in.size = **finalSize;
            return true;
        }
        // A final file with other content (or unreadable) is not overwritten silently: it is replaced only by
        // a download that verifies.
    }
    return startPart(download, std::move(*opened));
}

bool ResumeInspector::startPart(FileDownload& download, PartFile part) {
    const auto partSize = part.existingPartSize();
    if (!partSize) {
        decided(download, download.fail(partSize.error().message));
        return false;
    }
    if (!*partSize || **partSize == 0) {
        download.setState(FileState::Queued);
        return false;
    }
    if (download.file.size && **partSize > *download.file.size) {
        if (auto discarded = part.discard(); !discarded) {
            decided(download, download.fail(discarded.error().message));
            return false;
        }
        download.setState(FileState::Queued);
        return false;
    }
    const auto size = part.openPart();
    if (!size) {
        decided(download, download.fail(size.error().message));
        return false;
    }
    download.part = std::move(part);
    m_current.emplace().size = *size;
    return true;
}

// Everything is hashed: decide. True when there is more to hash (the part file, after a finished file that
// did not verify).
bool ResumeInspector::finish(FileDownload& download, Clock::time_point now) {
    ResumeInspection in = std::move(*m_current);
    m_current.reset();
    PartFile part = std::move(*download.part);
    download.part.reset();
    auto& report = download.report;
    if (in.final) {
        if (in.hash.hexDigest() == download.file.sha256) {
            download.offset = in.size;
            report.bytesDone = in.size;
            report.size = in.size;
            decided(download, download.done(FileState::AlreadyPresent));
            return false;
        }
        return startPart(download, std::move(part));
    }
    download.hash = std::move(in.hash);
    download.offset = in.size;
    report.bytesDone = in.size;
    report.state = FileState::Queued;
    const auto& file = download.file;
    if (file.size && download.offset == *file.size && !file.sha256.empty()) {
        if (download.hash.hexDigestSoFar() != file.sha256) {
            // Whole but wrong: no request can fix these bytes; start over without counting an attempt.
            ++download.counters.hashMismatches;
            if (auto discarded = part.discard(); !discarded) {
                decided(download, download.fail(discarded.error().message));
                return false;
            }
            download.hash = Sha256();
            download.offset = 0;
            report.bytesDone = 0;
            return false;
        }
        // Killed between the last byte and the rename: finish it here, without a request.
        download.part = std::move(part);
        report.resumedFrom = download.offset;
        decided(download, download.finish(now));
    }
    return false;
}

} // namespace nicer::net
