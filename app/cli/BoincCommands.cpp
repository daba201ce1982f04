#include "BoincCommands.h"

#include "ExitCode.h"
#include "util/Text.h"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <unistd.h>

namespace nicer::cli {

namespace {

/// "12 s", "4 min", "2.5 h", "3.0 days".
std::string humanDuration(double seconds) {
    char text[32];
    if (seconds < 120) {
        std::snprintf(text, sizeof text, "%.0f s", seconds);
    } else if (seconds < 7200) {
        std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
    } else if (seconds < 172800) {
        std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
    } else {
        std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
    }
    return text;
}

/// Seconds since the epoch as local "YYYY-MM-DD HH:MM".
std::string localTime(std::int64_t seconds) {
    const std::time_t t = seconds;
    std::tm tm{};
    localtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
    return text;
}

/// The project's name for a URL, or the URL while the client has not learnt the name.
std::string projectName(const api::BoincStatus& b, const std::string& url) {
    for (const auto& p : b.projects) {
        if (p.url == url && !p.name.empty()) {
            return p.name;
        }
    }
    return url;
}

std::string rateLimit(double rate) {
    return rate > 0 ? text::humanBytes(rate) + "/s" : "no limit";
}

/// "running", "suspended: the computer is busy", ...: the state line's words. nicerd's detail of "held" is a
/// sentence of its own that starts with why ("held: ...", "paused: ..."), as the tray shows it.
std::string stateWords(const api::BoincStatus& b) {
    std::string words(api::busKeyword(b.state));
    if (b.state == api::BoincState::Held && !b.detail.empty()) {
        words = b.detail;
    } else if (!b.detail.empty()) {
        words += ": " + b.detail;
    }
    if (api::boincAnswers(b.state)) {
        words += b.overrideApplied
                     ? " (nicer's preferences are in force: it never suspends or throttles itself)"
                     : " (nicer's preferences are not in force yet)";
    }
    return words;
}

void printBoinc(const api::BoincStatus& b) {
    std::printf("BOINC client: %s\n", stateWords(b).c_str());
    if (!b.systemService.empty()) {
        std::printf("  note: %s\n", b.systemService.c_str());
    }
    if (b.state == api::BoincState::Off) {
        if (b.systemService.empty()) {
            std::printf("  choose the boinc workload to run it under nicer: nicer workload boinc\n");
        }
        return;
    }
    std::printf("  transfers yield to your traffic: down %s, up %s\n", rateLimit(b.maxDownRate).c_str(),
                rateLimit(b.maxUpRate).c_str());
    if (!b.clock.empty()) {
        std::printf("  BOINC's clock: %s\n", b.clock.c_str());
    }
    std::printf("Projects:%s\n", b.projects.empty() ? " none (attach one: nicer boinc attach URL KEY)" : "");
    for (const auto& p : b.projects) {
        std::printf("  %s  %s\n    credit %.0f (this computer %.0f, recently %.1f a day)%s%s%s\n",
                    p.name.empty() ? "(name not known yet)" : p.name.c_str(), p.url.c_str(), p.userCredit,
                    p.hostCredit, p.recentCredit, p.suspended ? ", suspended" : "",
                    p.noMoreWork ? ", no new tasks" : "", p.viaAccountManager ? ", via account manager" : "");
    }
    std::printf("Tasks:%s\n", b.tasks.empty() ? " none" : "");
    for (const auto& t : b.tasks) {
        std::printf("  %s  (%s)\n    %s, %.1f%% done, %s elapsed, %s left%s\n", t.name.c_str(),
                    projectName(b, t.projectUrl).c_str(), std::string(api::busKeyword(t.state)).c_str(),
                    100.0 * t.fractionDone, humanDuration(t.elapsedSeconds).c_str(),
                    humanDuration(t.remainingSeconds).c_str(),
                    t.deadline > 0 ? (", due " + localTime(t.deadline)).c_str() : "");
        if (t.elapsedLimitSeconds > 0.0 && api::boincTaskCanRun(t.state)) {
            std::printf("    BOINC's clock: %s of the %s BOINC allows (%.0f%%), %s of CPU\n",
                        humanDuration(t.elapsedSeconds).c_str(), humanDuration(t.elapsedLimitSeconds).c_str(),
                        100.0 * t.elapsedSeconds / t.elapsedLimitSeconds,
                        humanDuration(t.cpuSeconds).c_str());
        }
    }
    if (!b.transfers.empty()) {
        std::printf("Transfers:\n");
    }
    for (const auto& t : b.transfers) {
        std::printf("  %s %s  %s of %s, %s\n", t.upload ? "up  " : "down", t.name.c_str(),
                    text::humanBytes(t.bytesDone).c_str(), text::humanBytes(t.bytesTotal).c_str(),
                    t.state == api::BoincTransferState::Active
                        ? (text::humanBytes(t.rate) + "/s").c_str()
                        : std::string(api::busKeyword(t.state)).c_str());
    }
    constexpr std::size_t kShown = 8;
    if (!b.notices.empty()) {
        std::printf("Notices and errors (latest %zu):\n", std::min(kShown, b.notices.size()));
    }
    for (std::size_t i = b.notices.size() > kShown ? b.notices.size() - kShown : 0; i < b.notices.size();
         ++i) {
        const auto& n = b.notices[i];
        std::printf("  %s %s%s%s%s%s\n", localTime(n.time).c_str(), n.error ? "error: " : "",
                    n.project.empty() ? "" : (n.project + ": ").c_str(), n.title.c_str(),
                    n.title.empty() ? "" : ": ", n.text.c_str());
    }
}

/// Reads the account manager password from standard input (one line), so that it never shows in `ps`.
std::string readPassword() {
    if (isatty(STDIN_FILENO)) {
        std::cerr << "password: " << std::flush;
    }
    std::string password;
    std::getline(std::cin, password);
    return password;
}

} // namespace

void printBoincSummary(const api::BoincStatus& b) {
    if (b.state == api::BoincState::Off && b.systemService.empty()) {
        return;
    }
    std::printf("  boinc        %s\n", stateWords(b).c_str());
    if (!b.systemService.empty()) {
        std::printf("               %s\n", b.systemService.c_str());
    }
    if (b.state == api::BoincState::Off) {
        return;
    }
    std::size_t running = 0;
    for (const auto& t : b.tasks) {
        running += t.state == api::BoincTaskState::Running;
    }
    if (!b.clock.empty()) {
        std::printf("               BOINC's clock %s\n", b.clock.c_str());
    }
    std::printf(
        "               %zu project%s, %zu task%s (%zu running), %zu transfer%s; `nicer boinc` lists them\n",
        b.projects.size(), b.projects.size() == 1 ? "" : "s", b.tasks.size(), b.tasks.size() == 1 ? "" : "s",
        running, b.transfers.size(), b.transfers.size() == 1 ? "" : "s");
}

nlohmann::json boincJson(const api::BoincStatus& b) {
    nlohmann::json projects = nlohmann::json::array();
    for (const auto& p : b.projects) {
        projects.push_back({{"url", p.url},
                            {"name", p.name},
                            {"user_credit", p.userCredit},
                            {"host_credit", p.hostCredit},
                            {"recent_credit", p.recentCredit},
                            {"suspended", p.suspended},
                            {"no_more_work", p.noMoreWork},
                            {"via_account_manager", p.viaAccountManager}});
    }
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : b.tasks) {
        tasks.push_back({{"name", t.name},
                         {"project_url", t.projectUrl},
                         {"state", api::busKeyword(t.state)},
                         {"fraction_done", t.fractionDone},
                         {"elapsed_s", t.elapsedSeconds},
                         {"remaining_s", t.remainingSeconds},
                         {"cpu_s", t.cpuSeconds},
                         {"elapsed_limit_s",
                          t.elapsedLimitSeconds > 0.0 ? nlohmann::json(t.elapsedLimitSeconds) : nullptr},
                         {"deadline", t.deadline > 0 ? nlohmann::json(t.deadline) : nullptr}});
    }
    nlohmann::json transfers = nlohmann::json::array();
    for (const auto& t : b.transfers) {
        transfers.push_back({{"name", t.name},
                             {"project_url", t.projectUrl},
                             {"upload", t.upload},
                             {"bytes_total", t.bytesTotal},
                             {"bytes_done", t.bytesDone},
                             {"rate", t.rate},
                             {"state", api::busKeyword(t.state)}});
    }
    nlohmann::json notices = nlohmann::json::array();
    for (const auto& n : b.notices) {
        notices.push_back({{"seqno", n.seqno},
                           {"time", n.time},
                           {"project", n.project},
                           {"title", n.title},
                           {"text", n.text},
                           {"error", n.error}});
    }
    return {{"state", api::busKeyword(b.state)},
            {"detail", b.detail},
            {"system_service", b.systemService},
            {"override_applied", b.overrideApplied},
            {"clock", b.clock},
            {"max_down_rate", b.maxDownRate},
            {"max_up_rate", b.maxUpRate},
            {"projects", projects},
            {"tasks", tasks},
            {"transfers", transfers},
            {"notices", notices}};
}

int runBoincCommand(const BoincOptions& o) {
    auto client = dbus::DaemonClient::connect();
    if (!client) {
        std::cerr << "nicer: " << client.error().message << '\n';
        return kExitFailure;
    }
    const auto report = [](const char* what, const Result<void>& done) {
        if (!done) {
            std::cerr << "nicer boinc " << what << ": " << done.error().message << '\n';
            return int(kExitFailure);
        }
        return int(kExitOk);
    };
    if (o.action == BoincAction::Attach) {
        return report("attach", client->boincAttach(o.url, o.accountKey));
    }
    if (o.action == BoincAction::AttachManager) {
        const std::string password = readPassword();
        if (password.empty()) {
            std::cerr << "nicer boinc attach-manager: no password on standard input\n";
            return kExitBadInput;
        }
        return report("attach-manager", client->boincAttachAccountManager(o.url, o.managerName, password));
    }
    if (o.action == BoincAction::Detach) {
        return report("detach", client->boincDetach(o.url));
    }
    auto status = client->status();
    if (!status) {
        std::cerr << "nicer boinc: " << status.error().message << '\n';
        return kExitFailure;
    }
    if (o.json) {
        std::cout << boincJson(status->boinc).dump(2) << '\n';
    } else {
        printBoinc(status->boinc);
    }
    return kExitOk;
}

} // namespace nicer::cli
