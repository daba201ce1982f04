#pragma once

#include "net/fetch/FileDownload.h"
#include "net/fetch/Sha256.h"
#include "util/UniqueFd.h"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>

namespace nicer::net {

/// The file ResumeInspector is hashing now. (Outside the class: clang cannot emplace a nested struct with
/// default member initializers inside its enclosing class.)
struct ResumeInspection {
    bool final = false; ///< the finished file NAME (opened as finalFile), else NAME.part
    UniqueFd finalFile;
    std::uint64_t size = 0; ///< bytes to hash
    std::uint64_t done = 0; ///< bytes hashed so far
    Sha256 hash;
};

/**
 * Looks at what earlier runs left, a file at a time: a finished file that verifies is skipped
 * (AlreadyPresent); a part file is hashed so the download resumes where it ends and the final hash still
 * covers every byte; a part file longer than the file, or whole but wrong, is discarded. Hashing goes a
 * budget of bytes per call, so a download directory of many gigabytes never holds up the loop.
 */
class ResumeInspector {
public:
    using Clock = std::chrono::steady_clock;

    /// @p onDone is called for a file the inspection finishes (already present, finished, or failed).
    ResumeInspector(std::filesystem::path dir, std::function<void(FileDownload&)> onDone);

    /// Queues @p download (state Checking until it is decided). It must outlive the inspection.
    void add(FileDownload& download);
    /// Hashes at most @p budget bytes, deciding files on the way; true while there is more to do.
    bool run(std::uint64_t budget, Clock::time_point now);
    /// Forgets every queued file (the fetch was cancelled).
    void clear();
    bool empty() const { return m_queue.empty(); }

private:
    bool start(FileDownload& download);
    bool startPart(FileDownload& download, PartFile part);
    bool finish(FileDownload& download, Clock::time_point now);
    void decided(FileDownload& download, FileDownload::Outcome outcome);

    std::filesystem::path m_dir;
    std::function<void(FileDownload&)> m_onDone;
    std::deque<FileDownload*> m_queue;
    /// The front file's, once it has something to hash.
    std::optional<ResumeInspection> m_current;
};

} // namespace nicer::net
