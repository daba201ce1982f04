#pragma once

#include "util/Result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::workload {

/// The GUI RPC port a BOINC client listens on when it is given none.
inline constexpr int kBoincDefaultRpcPort = 31416;
/// The port nicer's own BOINC client prefers: not the system client's 31416, so that both can run.
inline constexpr int kNicerBoincRpcPort = 31418;
/// In a preset's argv, stands for the GUI RPC port nicer's BOINC client gets (chooseBoincRpcPort()).
inline constexpr std::string_view kBoincRpcPortArgument = "{boinc-rpc-port}";

/// Where a BOINC client that is part of a workload keeps its state and answers GUI RPC.
struct BoincClientCommand {
    std::filesystem::path dir; ///< its data directory (--dir): gui_rpc_auth.cfg and the prefs live there
    int rpcPort = kBoincDefaultRpcPort;

    bool operator==(const BoincClientCommand&) const = default;
};

/**
 * Whether @p argv runs the BOINC client, and where it keeps its state. The client is the first argument
 * named `boinc` (a bare name or a path), so a command behind a wrapper (`nice boinc ...`, `ip netns exec NS
 * boinc ...`, `firejail boinc ...`) counts; its own options follow it (`--dir DIR`, `--gui_rpc_port N`, or
 * with one dash, as BOINC accepts).
 *
 * nullopt when no argument is the client. An error when it is, but nicer cannot govern it: without --dir
 * nicer cannot find its password, and a port that is not a number is a mistake.
 */
Result<std::optional<BoincClientCommand>> boincClientOf(const std::vector<std::string>& argv);

/**
 * The GUI RPC port for nicer's BOINC client: @p preferred when nothing listens on it on loopback, else a
 * free port the kernel picks (so that a second user's nicer, or any other program, does not block it).
 */
int chooseBoincRpcPort(int preferred = kNicerBoincRpcPort);

} // namespace nicer::workload
