#pragma once

#include "util/Result.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

namespace nicer::tray {

/**
 * "Start at login": an XDG autostart entry for nicer-tray in a directory, normally
 * `$XDG_CONFIG_HOME/autostart`. The entry's existence is the setting, so a user who deletes the file (or
 * turns it off in the desktop's own settings) sees that in the window.
 *
 * Inside a flatpak the sandbox's config directory is not the host's, so an entry there would do nothing:
 * isSupported() is false and the window disables its switch (see unsupportedReason()).
 */
class Autostart {
    Q_DECLARE_TR_FUNCTIONS(Autostart)

public:
    /// @p directory: where the entry goes; the tests pass a temporary one.
    explicit Autostart(QString directory);

    /// `$XDG_CONFIG_HOME/autostart` (QStandardPaths' generic config location).
    static QString userDirectory();
    /// The text of the entry: starts nicer-tray in the tray (no `--show`).
    static QByteArray entryText();

    /// False inside a flatpak (/.flatpak-info exists), where the entry would not reach the host.
    bool isSupported() const;
    /// Why isSupported() is false, in plain words; empty when it is true.
    QString unsupportedReason() const;

    QString entryPath() const;
    bool isEnabled() const;
    /// Writes the entry (atomically: a crash leaves the old file or none) or removes it. On failure
    /// nothing changed and the error says what failed and what to do.
    Result<void> setEnabled(bool enabled);

    /// For tests: the file whose existence marks a flatpak sandbox.
    void setSandboxMarker(QString path) { m_sandboxMarker = std::move(path); }

private:
    QString m_directory;
    QString m_sandboxMarker = QStringLiteral("/.flatpak-info");
};

} // namespace nicer::tray
