#include "FetchCommand.h"

#include "ExitCode.h"
#include "libsystemd/Event.h"
#include "net/fetch/DownloadOrder.h"
#include "net/fetch/DownloadSource.h"
#include "net/fetch/FetchObserver.h"
#include "net/fetch/Fetcher.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/Url.h"
#include "net/rate/NiceRateController.h"
#include "net/rate/RateLimiter.h"
#include "util/Text.h"

#include <systemd/sd-event.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace nicer::cli {

namespace {

using Clock = std::chrono::steady_clock;

/// Draws the progress: one line redrawn in place on a terminal, a line per finished file otherwise.
class ProgressPrinter : public net::FetchObserver {
public:
    ProgressPrinter(sd_event* event, bool terminal)
        : m_event(event)
        , m_terminal(terminal) {}

    void onProgress(const net::FetchReport& report) override {
        if (!m_terminal) {
            return;
        }
        const auto now = Clock::now();
        if (now - m_lastDraw < std::chrono::milliseconds(200)) {
            return; // at most five redraws a second
        }
        m_lastDraw = now;
        draw(report);
    }

    void onFileDone(const net::FetchReport& report, std::size_t index) override {
        const auto& file = report.files[index];
        clearLine();
        switch (file.state) {
        case net::FileState::Ok:
            std::fprintf(stderr, "ok       %s (%s%s)\n", file.name.c_str(),
                         text::humanBytes(double(file.bytesDone)).c_str(),
                         file.verified ? "" : ", unverified: no hash to check");
            break;
        case net::FileState::AlreadyPresent:
            std::fprintf(stderr, "present  %s\n", file.name.c_str());
            break;
        case net::FileState::Failed:
            std::fprintf(stderr, "FAILED   %s: %s\n", file.name.c_str(), file.error.c_str());
            break;
        default:
            break;
        }
        if (m_terminal) {
            draw(report);
        }
    }

    void onFinished(const net::FetchReport& /*report*/) override {
        clearLine();
        sd_event_exit(m_event, 0);
    }

private:
    void draw(const net::FetchReport& report) {
        const auto& t = report.totals;
        const std::size_t done = t.filesOk + t.filesAlreadyPresent + t.filesFailed;
        std::string line = std::to_string(done) + "/" + std::to_string(t.files) + " files  " +
                           text::humanBytes(double(t.bytesDone)) + " / " +
                           text::humanBytes(double(t.bytesTotal)) + "  " + text::humanBytes(t.currentRate) +
                           "/s";
        if (t.rateLimit) {
            line += " (limit " + text::humanBytes(*t.rateLimit) + "/s)";
        }
        line += "  " + std::to_string(t.activeStreams) + (t.activeStreams == 1 ? " stream" : " streams");
        if (t.filesFailed > 0) {
            line += "  " + std::to_string(t.filesFailed) + " failed";
        }
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        std::fflush(stderr);
        m_drawn = true;
    }

    void clearLine() {
        if (m_drawn) {
            std::fprintf(stderr, "\r\033[K");
            m_drawn = false;
        }
    }

    sd_event* m_event;
    bool m_terminal;
    bool m_drawn = false;
    Clock::time_point m_lastDraw{};
};

/// Stops the fetch in progress on SIGINT/SIGTERM; part files stay for the next run.
struct Interrupt {
    net::Fetcher* fetcher = nullptr;
    bool interrupted = false;

    static int onSignal(sd_event_source*, const struct signalfd_siginfo*, void* userdata) noexcept {
        auto* self = static_cast<Interrupt*>(userdata);
        self->interrupted = true;
        if (self->fetcher) {
            self->fetcher->cancel();
        }
        return 0;
    }
};

/// An sd-event loop of its own (one finished loop cannot run again) that cancels the fetch on a signal.
struct Loop {
    libsystemd::EventPtr event;
    libsystemd::EventSourcePtr onInterrupt;
    libsystemd::EventSourcePtr onTerminate;
};

Result<Loop> makeLoop(Interrupt& interrupt) {
    Loop loop;
    sd_event* event = nullptr;
    if (const int r = sd_event_new(&event); r < 0) {
        return Error{std::string("cannot set up an event loop: ") + std::strerror(-r)};
    }
    loop.event.reset(event);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    sd_event_source* source = nullptr;
    if (const int r = sd_event_add_signal(event, &source, SIGINT, &Interrupt::onSignal, &interrupt); r < 0) {
        return Error{std::string("cannot watch SIGINT: ") + std::strerror(-r)};
    }
    loop.onInterrupt.reset(source);
    if (const int r = sd_event_add_signal(event, &source, SIGTERM, &Interrupt::onSignal, &interrupt); r < 0) {
        return Error{std::string("cannot watch SIGTERM: ") + std::strerror(-r)};
    }
    loop.onTerminate.reset(source);
    return loop;
}

int runLoop(sd_event* event, net::Fetcher& fetcher, Interrupt& interrupt) {
    interrupt.fetcher = &fetcher;
    const int r = sd_event_loop(event);
    interrupt.fetcher = nullptr;
    if (r < 0) {
        std::cerr << "nicer fetch: the event loop failed: " << std::strerror(-r) << '\n';
        return kExitFailure;
    }
    return kExitOk;
}

/// Downloads the manifest at @p url (unverified, nothing to check it against) and parses it.
Result<std::vector<net::MetalinkFile>> fetchManifest(const net::Url& url, const net::FetcherOptions& base,
                                                     Interrupt& interrupt, bool& badInput) {
    auto file = net::singleFileOf(url);
    if (!file) {
        badInput = true;
        return file.error();
    }
    auto loop = makeLoop(interrupt);
    if (!loop) {
        return loop.error();
    }
    sd_event* event = loop->event.get();
    std::string pattern = (std::filesystem::temp_directory_path() / "nicer-manifest-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
        return Error{"cannot create a temporary directory for the manifest: " +
                     std::string(std::strerror(errno))};
    }
    const std::filesystem::path temporary = pattern;
    net::FetcherOptions options = base;
    options.rateController = nullptr;
    ProgressPrinter quiet(event, false);
    auto fetcher = net::Fetcher::create(event, {*file}, temporary, options, &quiet);
    Result<std::vector<net::MetalinkFile>> result = Error{"the manifest download did not finish"};
    if (!fetcher) {
        result = fetcher.error();
    } else if (auto started = (*fetcher)->start(); !started) {
        result = started.error();
    } else if (runLoop(event, **fetcher, interrupt) == kExitOk && !interrupt.interrupted) {
        const auto& report = (*fetcher)->report();
        if (report.files[0].state != net::FileState::Ok) {
            result = Error{"cannot download the manifest: " + report.files[0].error};
        } else {
            result = net::readMetalink(temporary / file->name);
            badInput = !result.ok();
        }
    }
    std::error_code ignored;
    std::filesystem::remove_all(temporary, ignored);
    return result;
}

nlohmann::json summaryJson(const net::FetchReport& report) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& file : report.files) {
        nlohmann::json f;
        f["name"] = file.name;
        f["path"] = file.path.string();
        f["size"] = file.size ? nlohmann::json(*file.size) : nlohmann::json(nullptr);
        f["sha256"] = file.sha256;
        f["verified"] = file.verified;
        f["state"] = std::string(net::toString(file.state));
        f["attempts"] = file.attempts;
        f["resumedFrom"] = file.resumedFrom;
        f["bytesDownloaded"] = file.bytesDownloaded;
        f["mirrorUsed"] = file.mirrorUsed;
        f["error"] = file.error;
        files.push_back(std::move(f));
    }
    const auto& t = report.totals;
    nlohmann::json totals;
    totals["files"] = t.files;
    totals["ok"] = t.filesOk;
    totals["alreadyPresent"] = t.filesAlreadyPresent;
    totals["failed"] = t.filesFailed;
    totals["unverified"] = t.filesUnverified;
    totals["bytes"] = t.bytesDownloaded;
    totals["bytesTotal"] = t.bytesTotal;
    totals["seconds"] = t.elapsed.count();
    totals["connectionsOpened"] = t.connectionsOpened;
    totals["streamsOpened"] = t.streamsOpened;
    totals["retries"] = t.retries;
    totals["hashMismatches"] = t.hashMismatches;
    totals["rangeIgnored"] = t.rangeIgnored;
    totals["redirects"] = t.redirects;
    return nlohmann::json{{"files", files}, {"totals", totals}, {"cancelled", report.cancelled}};
}

void printSummary(const net::FetchReport& report) {
    const auto& t = report.totals;
    std::string line =
        std::to_string(t.files) + " files: " + std::to_string(t.filesOk) + " downloaded, " +
        std::to_string(t.filesAlreadyPresent) + " already present, " + std::to_string(t.filesFailed) +
        " failed; " + text::humanBytes(double(t.bytesDownloaded)) + " in " +
        std::to_string(std::lround(t.elapsed.count())) + " s over " + std::to_string(t.connectionsOpened) +
        " connection" + (t.connectionsOpened == 1 ? "" : "s");
    if (t.filesUnverified > 0) {
        line += "; " + std::to_string(t.filesUnverified) +
                " unverified (no SHA-256 to check: only the length the server announced was checked)";
    }
    std::cerr << line << '\n';
}

/// Says what failed, after the command's name, and gives the exit code.
int fail(const std::string& message, int exitCode) {
    std::cerr << "nicer fetch: " << message << '\n';
    return exitCode;
}

/// The fetcher's options from the command line's; a failure names the option it is about.
Result<net::FetcherOptions> fetcherOptions(const FetchOptions& o) {
    net::FetcherOptions options;
    options.streams = o.streams;
    options.attemptsPerMirror = o.attempts;
    options.backoffBase = std::chrono::milliseconds(static_cast<long>(o.retryWait * 1000.0));
    options.backoffCap = std::max(options.backoffBase, std::chrono::milliseconds(60000));
    options.stallTimeout = std::chrono::milliseconds(static_cast<long>(o.stallTimeout * 1000.0));
    if (o.minRate == "0") {
        options.minRate = 0.0;
    } else {
        const auto minRate = net::parseByteRate(o.minRate);
        if (!minRate) {
            return Error{"--min-rate: " + minRate.error().message};
        }
        options.minRate = *minRate;
    }
    const auto order = net::parseDownloadOrder(o.order);
    if (!order) {
        return Error{"--order: " + order.error().message};
    }
    options.order = *order;
    if (!o.maxRate.empty()) {
        const auto rate = net::parseByteRate(o.maxRate);
        if (!rate) {
            return Error{"--max-rate: " + rate.error().message};
        }
        options.maxRate = *rate;
    }
    if (!o.caFile.empty()) {
        options.tls.caFile = o.caFile;
    }
    return options;
}

/// The files that @p url names: those of the manifest it points to (downloaded first), or the one file.
Result<std::vector<net::MetalinkFile>> filesOfUrl(const net::Url& url, const net::FetcherOptions& options,
                                                  Interrupt& interrupt, bool& badInput) {
    if (net::namesManifest(url)) {
        return fetchManifest(url, options, interrupt, badInput);
    }
    auto file = net::singleFileOf(url);
    if (!file) {
        badInput = true;
        return file.error();
    }
    std::vector<net::MetalinkFile> files;
    files.push_back(std::move(*file));
    return files;
}

/// The files that @p source names: a manifest file, a manifest's URL or a file's URL. @p badInput says
/// whether a failure is the source's fault.
Result<std::vector<net::MetalinkFile>> filesOf(const std::string& source, const net::FetcherOptions& options,
                                               Interrupt& interrupt, bool& badInput) {
    if (!net::isHttpUrl(source)) {
        auto manifest = net::readMetalink(source);
        badInput = !manifest.ok();
        return manifest;
    }
    auto url = net::parseUrl(source);
    if (!url) {
        badInput = true;
        return url.error();
    }
    return filesOfUrl(*url, options, interrupt, badInput);
}

/// Prints what the fetch did (and its JSON when asked) and gives the exit code.
int reportFetch(const net::FetchReport& report, bool json) {
    printSummary(report);
    if (report.cancelled) {
        std::cerr << "nicer fetch: interrupted; part files are kept: run the same command again to resume\n";
    }
    if (json) {
        std::cout << summaryJson(report).dump(2) << '\n';
    }
    return report.totals.filesFailed > 0 || report.cancelled ? kExitFailure : kExitOk;
}

/// Downloads @p files into @p dir on a loop of its own, with the progress on stderr.
int downloadFiles(std::vector<net::MetalinkFile> files, const std::string& dir,
                  const net::FetcherOptions& options, bool json, Interrupt& interrupt) {
    auto loop = makeLoop(interrupt);
    if (!loop) {
        return fail(loop.error().message, kExitFailure);
    }
    sd_event* event = loop->event.get();
    ProgressPrinter printer(event, ::isatty(STDERR_FILENO) == 1);
    auto fetcher = net::Fetcher::create(event, std::move(files), dir, options, &printer);
    if (!fetcher) {
        return fail(fetcher.error().message, kExitBadInput);
    }
    if (auto started = (*fetcher)->start(); !started) {
        return fail(started.error().message, kExitFailure);
    }
    if (const int status = runLoop(event, **fetcher, interrupt); status != kExitOk) {
        return status;
    }
    return reportFetch((*fetcher)->report(), json);
}

} // namespace

int runFetch(const FetchOptions& o) {
    auto options = fetcherOptions(o);
    if (!options) {
        return fail(options.error().message, kExitBadInput);
    }
    std::unique_ptr<net::RateController> nice;
    if (o.nice) {
        nice = net::makeNiceRateController();
        options->rateController = nice.get();
    }
    Interrupt interrupt;
    bool badInput = false;
    auto files = filesOf(o.source, *options, interrupt, badInput);
    if (!files) {
        return fail(files.error().message, badInput ? kExitBadInput : kExitFailure);
    }
    if (interrupt.interrupted) {
        return kExitFailure;
    }
    return downloadFiles(std::move(*files), o.dir, *options, o.json, interrupt);
}

} // namespace nicer::cli
