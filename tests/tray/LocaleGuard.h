#pragma once
// One locale for the tray tests that check numbers and sizes as text, whatever the machine's LANG; the
// previous default comes back at the end of the case.

#include <QLocale>

namespace nicer::tray::test {

class LocaleGuard {
public:
    explicit LocaleGuard(const QLocale& locale = QLocale(QLocale::English, QLocale::UnitedStates)) {
        QLocale::setDefault(locale);
    }
    ~LocaleGuard() { QLocale::setDefault(m_previous); }
    LocaleGuard(const LocaleGuard&) = delete;
    LocaleGuard& operator=(const LocaleGuard&) = delete;

private:
    QLocale m_previous;
};

} // namespace nicer::tray::test
