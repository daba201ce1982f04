#pragma once

#include <sstream>
#include <string_view>

namespace nicer::log {

/// A log line's syslog priority (sd-daemon(3)): what the journal files it under, so that `journalctl -p
/// warning` shows a fallback and a failure, and not the notes of a start.
enum class Priority { Error = 3, Warning = 4, Notice = 5, Info = 6 };

/// One line on standard error. Where standard error is the journal (systemd says so in JOURNAL_STREAM) it
/// starts with its priority, "<4>nicerd: ...", which the journal reads and takes off; on a terminal or in a
/// file it is the line alone.
void write(Priority priority, std::string_view text);

/// Whether @p journalStream (JOURNAL_STREAM's value, "DEVICE:INODE"; null when unset) names the file open as
/// @p fd. A program that inherited the variable but writes elsewhere (a terminal, a file) is not the
/// journal's.
bool namesStream(const char* journalStream, int fd);

/// A line put together with <<, written at the end of the statement: log::warning() << "nicerd: " << why;
class Line {
public:
    explicit Line(Priority priority)
        : m_priority(priority) {}
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;
    ~Line() { write(m_priority, m_text.str()); }

    template <typename T>
    Line& operator<<(const T& value) {
        m_text << value;
        return *this;
    }

private:
    Priority m_priority;
    std::ostringstream m_text;
};

/// Something failed: nicerd stops, or the request is refused.
inline Line error() {
    return Line(Priority::Error);
}
/// nicerd goes on, in a way the volunteer did not choose: a fallback, a lost connection.
inline Line warning() {
    return Line(Priority::Warning);
}
/// nicerd goes on as asked, and this is worth knowing: what it chose, a connection back.
inline Line notice() {
    return Line(Priority::Notice);
}
/// What nicerd does, as planned.
inline Line info() {
    return Line(Priority::Info);
}

} // namespace nicer::log
