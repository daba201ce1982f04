#include "daemon/UserPause.h"

#include "util/KeyValueText.h"
#include "util/Log.h"
#include "util/TextFile.h"

#include <charconv>
#include <cstdint>
#include <system_error>

namespace nicer::daemon {

namespace {

using std::chrono::system_clock;

constexpr std::string_view kUntilKey = "until-usec";

std::int64_t sinceEpochUSec(system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

} // namespace

std::string pauseFileText(PauseEnd end) {
    std::string text = "# The volunteer work is paused until `nicer resume`";
    text += end ? " or the time below" : "";
    text += ": nicerd starts it paused while this file is here.\n";
    if (end) {
        text += std::string(kUntilKey) + " = " + std::to_string(sinceEpochUSec(*end)) + "\n";
    }
    return text;
}

Result<PauseEnd> readPauseFileText(std::string_view text, const std::string& source) {
    // An older nicerd wrote one sentence, no key: its pause holds until resume.
    if (text.find('=') == std::string_view::npos) {
        return PauseEnd{};
    }
    PauseEnd end;
    auto read = text::forEachKeyValueLine(
        text, source, "until-usec = MICROSECONDS", [&](const text::KeyValueLine& line) -> Result<void> {
            if (line.key != kUntilKey) {
                return Error{"unknown key '" + std::string(line.key) + "'"};
            }
            std::int64_t usec = 0;
            const auto* last = line.value.data() + line.value.size();
            if (auto [ptr, ec] = std::from_chars(line.value.data(), last, usec);
                ec != std::errc() || ptr != last || usec <= 0) {
                return Error{"'" + std::string(line.value) +
                             "' is not a time (microseconds since 1970, more than 0)"};
            }
            end = system_clock::time_point(std::chrono::microseconds(usec));
            return {};
        });
    if (!read) {
        return read.error();
    }
    return end;
}

void UserPause::onTimer() {
    log::notice() << "nicerd: the pause has ended, as it was set to; the work runs again";
    m_onEnd(resume()); // resume() ends the timer, as a timer may from its callback
}

Result<void> UserPause::restore(system_clock::time_point now) {
    std::error_code ec;
    if (m_file.empty() || !std::filesystem::exists(m_file, ec)) {
        return {};
    }
    auto text = readTextFile(m_file);
    auto end = text ? readPauseFileText(*text, m_file.string()) : Result<PauseEnd>(text.error());
    if (!end) {
        log::warning()
            << "nicerd: the work stays paused until `nicer resume`, since the end of its pause could "
               "not be read: "
            << end.error().message;
    } else if (*end && **end <= now) {
        log::notice() << "nicerd: the pause ended while nicerd was not running; the work runs";
        return resume();
    }
    log::notice() << "nicerd: the work stays paused, as it was before nicerd restarted (" << m_file.string()
                  << "), until " << (end && *end ? "its end or " : "") << "nicer resume";
    return pause(end ? *end : PauseEnd{}, now);
}

Result<void> UserPause::pause(PauseEnd end, system_clock::time_point now) {
    if (end && *end <= now) {
        return Error{"the end of the pause has passed: give a time to come", ErrorKind::InvalidInput};
    }
    if (auto paused = m_loop.pause(); !paused) {
        return paused;
    }
    // To the microsecond, as the file, the bus and the timer keep it.
    m_end = end ? PauseEnd(std::chrono::floor<std::chrono::microseconds>(*end)) : std::nullopt;
    return keep();
}

Result<void> UserPause::keep() {
    if (!m_end) {
        m_timer = libsystemd::Timer();
    } else {
        if (!m_timer) {
            auto timer = libsystemd::Timer::create(
                m_event, [this] { onTimer(); }, CLOCK_REALTIME);
            if (!timer) {
                return timer.error().within(
                    "the work is paused, but it will not resume at the end you gave: ");
            }
            m_timer = std::move(*timer);
        }
        m_timer.armAt(std::chrono::microseconds(sinceEpochUSec(*m_end)));
    }
    if (m_file.empty()) {
        return {};
    }
    if (auto kept = writeFileAtomically(m_file, pauseFileText(m_end)); !kept) {
        return Error{"the work is paused, but the pause will not hold if nicerd restarts: " +
                     kept.error().message};
    }
    return {};
}

Result<void> UserPause::resume() {
    m_loop.resume();
    m_end = std::nullopt;
    m_timer = libsystemd::Timer();
    if (std::error_code ec; !m_file.empty() && !std::filesystem::remove(m_file, ec) && ec) {
        return Error{"the work runs again, but " + m_file.string() + " could not be removed (" +
                     ec.message() + "): nicerd will start it paused after a restart; delete that file"};
    }
    return {};
}

void UserPause::describe(api::DaemonState& state) const {
    state.pausedUntilUSec = m_end && m_loop.paused() ? static_cast<std::uint64_t>(sinceEpochUSec(*m_end)) : 0;
}

} // namespace nicer::daemon
