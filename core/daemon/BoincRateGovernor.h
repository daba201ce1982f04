#pragma once

#include "api/Boinc.h"
#include "kernel/TcpSockets.h"
#include "net/rate/NiceRateController.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * BOINC's file transfers as two monotonic byte counters, down and up, from the lists get_file_transfers
 * gives at each poll. A transfer counts from where it was first seen (what it moved before that is not
 * this period's traffic); one that went away (finished, or given up) stops counting. A transfer that
 * restarts from zero (a retry without resume) counts nothing until it passes where it was.
 */
class TransferCounter {
public:
    /// Takes the transfers of one poll.
    void update(const std::vector<api::BoincTransfer>& transfers);
    std::uint64_t downloaded() const { return m_down; }
    std::uint64_t uploaded() const { return m_up; }

private:
    std::map<std::pair<std::string, bool>, double> m_seen; // (name, upload) -> bytes done at the last poll
    std::uint64_t m_down = 0;
    std::uint64_t m_up = 0;
};

/// The limits to write into BOINC's max_bytes_sec_down and max_bytes_sec_up, bytes per second.
struct TransferLimits {
    double down = 0.0;
    double up = 0.0;
    bool operator==(const TransferLimits&) const = default;
};

/**
 * The nice rate controller for BOINC's transfers: the CPU's thesis controller on the link, as for nicer's
 * own downloads, with three changes, each measured with bench/net's part (d) (docs/bench-net.md):
 * - a period of 2 s rather than 0.5 s: BOINC can only be told a static limit, which its libcurl applies
 *   within a second or so; the controller must see the effect of one step before it takes the next;
 * - yieldAtOnce: a new limit reaches BOINC a period late, so when the user's traffic appears the rate is
 *   capped at once at what it leaves rather than integrated down over several periods;
 * - probes of 25% every 4 s once the start is over (10% every 10 s for nicer's downloads), so that BOINC,
 *   slow to follow a probe, still finds an idle link within a minute.
 */
net::NiceRateOptions boincNiceRateOptions();

/// How eagerly BoincRateGovernor changes BOINC's limits. Each change rewrites BOINC's override file and
/// adds lines to its event log: a limit that moves a little is left alone.
struct BoincRateOptions {
    net::NiceRateOptions nice = boincNiceRateOptions(); ///< one controller per direction
    /// A change smaller than this share is not pushed. Below the controller's probe step (10%), so that
    /// a probe for more capacity still goes out.
    double hysteresis = 0.08;
};

/**
 * Makes BOINC's transfers yield to the user's own traffic. Each poll feeds the machine's interface
 * counters and BOINC's traffic (its sockets', or its own transfer counts) to two nice rate controllers
 * (receive and send: the link is treated like the CPU, with a reserve band for the user); their rates are
 * what BOINC may use. A new limit is pushed at most once per controller period, after the controllers' first
 * step, and only when it moved by more than the hysteresis.
 *
 * Pure: no I/O and no clock of its own.
 */
class BoincRateGovernor {
public:
    explicit BoincRateGovernor(const BoincRateOptions& options = {});

    struct Sample {
        std::chrono::steady_clock::time_point time;
        std::optional<std::uint64_t> interfaceRxBytes; ///< the machine's, loopback excluded
        std::optional<std::uint64_t> interfaceTxBytes;
        std::vector<api::BoincTransfer> transfers; ///< BOINC's, from get_file_transfers
        /// BOINC's TCP sockets as the kernel sees them, when they could be read. BOINC counts the bytes its
        /// libcurl has read, while the kernel fills a receive buffer of many MiB at the link's speed, and it
        /// counts uploads before the kernel has sent them: the sockets' own counters say what crossed the
        /// link, and their round-trip times how much queue the link holds.
        std::optional<std::vector<kernel::TcpSocketInfo>> sockets;
    };

    /// Feeds one poll; returns the limits to push now, or nullopt to leave BOINC's as they are.
    std::optional<TransferLimits> onSample(const Sample& sample);

    /// What the controllers allow now (pushed or not).
    TransferLimits wanted() const { return m_wanted; }
    /// What was pushed last; nullopt before the first push.
    const std::optional<TransferLimits>& pushed() const { return m_pushed; }

    const net::NiceRateController& downController() const { return m_down; }
    const net::NiceRateController& upController() const { return m_up; }

private:
    bool worthPushing() const;
    /// Bytes in BOINC's sockets' buffers: received and unread, written and unacknowledged.
    struct Queues {
        double unread = 0.0;
        double unsent = 0.0;
    };
    struct LinkTraffic {
        std::optional<std::chrono::nanoseconds> receiveRtt;
        std::optional<std::chrono::nanoseconds> sendRtt;
        std::optional<Queues> queues; ///< when the sockets are known
    };
    /// Adds BOINC's bytes on the link since the last sample, down and up, from its sockets when they are
    /// known (else from its transfer counters); returns the round trips of the sockets that moved data since
    /// the last sample, and the sockets' queues.
    LinkTraffic countLinkBytes(const std::optional<std::vector<kernel::TcpSocketInfo>>& sockets);

    BoincRateOptions m_options;
    TransferCounter m_counter;
    /// BOINC's sockets at the last sample, by inode.
    std::optional<std::map<std::uint64_t, kernel::TcpSocketInfo>> m_lastSockets;
    std::uint64_t m_lastDownloaded = 0;
    std::uint64_t m_lastUploaded = 0;
    std::optional<Queues> m_queuesAtStep; ///< at the controllers' last step
    std::chrono::steady_clock::time_point m_stepTime;
    std::uint64_t m_downOnLink = 0;
    std::uint64_t m_upOnLink = 0;
    net::NiceRateController m_down;
    net::NiceRateController m_up;
    TransferLimits m_wanted;
    std::optional<TransferLimits> m_pushed;
    int m_steps = 0; ///< the controllers' steps at the last look
};

} // namespace nicer::daemon
