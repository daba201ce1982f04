#include "tray/Autostart.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

namespace nicer::tray {

namespace {

constexpr auto kEntryName = "org.nicer.Tray.desktop";

Error failure(const QString& what) {
    return Error{what.toStdString()};
}

} // namespace

Autostart::Autostart(QString directory)
    : m_directory(std::move(directory)) {}

QString Autostart::userDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) +
           QStringLiteral("/autostart");
}

QByteArray Autostart::entryText() {
    // Exec has no --show: at login nicer-tray belongs in the tray, not in a window over the desktop.
    return QByteArrayLiteral("[Desktop Entry]\n"
                             "Type=Application\n"
                             "Name=nicer\n"
                             "Comment=Show how your spare CPU goes to volunteer computing, in the tray\n"
                             "Exec=nicer-tray\n"
                             "Icon=org.nicer.Tray\n"
                             "Terminal=false\n"
                             "NoDisplay=true\n"
                             "X-GNOME-Autostart-enabled=true\n");
}

bool Autostart::isSupported() const {
    return !QFileInfo::exists(m_sandboxMarker);
}

QString Autostart::unsupportedReason() const {
    if (isSupported()) {
        return {};
    }
    return tr("nicer-tray runs in a flatpak, where it cannot add itself to your login programs. Add "
              "nicer in your desktop's settings for startup applications instead.");
}

QString Autostart::entryPath() const {
    return m_directory + QLatin1Char('/') + QLatin1String(kEntryName);
}

bool Autostart::isEnabled() const {
    return QFileInfo::exists(entryPath());
}

Result<void> Autostart::setEnabled(bool enabled) {
    const QString path = entryPath();
    if (!enabled) {
        QFile file(path);
        if (file.exists() && !file.remove()) {
            return failure(tr("Could not remove %1 (%2), so nicer-tray would still start at login. Delete "
                              "the file yourself or check the folder's permissions.")
                               .arg(path, file.errorString()));
        }
        return {};
    }
    if (!QDir().mkpath(m_directory)) {
        return failure(tr("Could not create the folder %1, so nicer-tray cannot start at login. Check "
                          "that your home folder is writable.")
                           .arg(m_directory));
    }
    QSaveFile file(path);
    const QByteArray text = entryText();
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit()) {
        return failure(tr("Could not write %1 (%2), so nicer-tray will not start at login. Check that "
                          "the folder is writable and the disk is not full.")
                           .arg(path, file.errorString()));
    }
    return {};
}

} // namespace nicer::tray
