#pragma once

#include "net/fetch/DownloadOrder.h"
#include "net/http2/Http2Session.h"
#include "net/transport/TlsContext.h"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>

namespace nicer::net {

class RateController;

/// The streams at once a download uses unless told otherwise: the default of `nicer fetch --streams`, of
/// nicerd's --streams and of FetcherOptions, written once.
inline constexpr std::size_t kDefaultStreams = 8;

/// How a Fetcher downloads. The defaults are what `nicer fetch` uses.
struct FetcherOptions {
    /// At most this many streams at once over all connections (and never more than a server allows).
    std::size_t streams = kDefaultStreams;
    /// Which waiting file gets a free stream first.
    DownloadOrder order = DownloadOrder::Srpt;
    /// Hard cap on the receive rate, in body bytes per second; nullopt for none.
    std::optional<double> maxRate;
    /// The nice mode: asked about every sampleInterval how fast to go (the lower of its answer and
    /// maxRate wins). Not owned; must outlive the Fetcher.
    RateController* rateController = nullptr;
    /// CA file for https mirrors signed by a private CA.
    TlsOptions tls;

    /// Failed attempts on one mirror before going on to the next one.
    int attemptsPerMirror = 5;
    /// Retries that cost nothing (GOAWAY, REFUSED_STREAM) in a row before they count as failures, so a
    /// server that refuses everything cannot keep a file busy for ever.
    int freeRetries = 10;
    /// Backoff between attempts: equal jitter from base, doubling up to cap.
    std::chrono::milliseconds backoffBase = std::chrono::seconds(1);
    std::chrono::milliseconds backoffCap = std::chrono::seconds(60);
    /// A source of uniform [0, 1) numbers for the jitter; empty: a random one.
    std::function<double()> uniform01;

    /// A connection with streams open and window to send that delivers nothing for this long is dropped
    /// and its files are retried; zero turns the check off.
    std::chrono::milliseconds stallTimeout = std::chrono::seconds(30);
    /// So is one that delivers fewer body bytes per second than this over a whole stallTimeout, while
    /// nicer withholds nothing from it: a trickle never lets the stall clock run out. Zero: no minimum.
    double minRate = 1024.0;
    /// Time to connect (and finish TLS) to each address of a server.
    std::chrono::milliseconds connectTimeout = std::chrono::seconds(30);

    /// Receive windows and header limits of each HTTP/2 session when no rate limit applies; with a limit
    /// the windows shrink to about rate x max(2 RTT, 100 ms) so the sender cannot run far ahead.
    Http2Session::Options session;
    /// How often the link is sampled (rate controller, progress, stall check).
    std::chrono::milliseconds sampleInterval = std::chrono::milliseconds(100);
    /// How often withheld bytes are acknowledged while a rate limit applies.
    std::chrono::milliseconds pacingInterval = std::chrono::milliseconds(10);
    /// Interface byte counters for the nice mode.
    std::filesystem::path procNetDev = "/proc/net/dev";
};

} // namespace nicer::net
