#pragma once

#include "tray/BoincModel.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QStackedWidget;

namespace nicer::tray {

/**
 * "Attach project…": a project's URL and the account key from its web site, or an account manager's URL
 * with the name and password there. It only asks; BoincPanel sends the request and tells the dialog how it
 * went (setBusy, showResult), so an answer that comes after the dialog was closed is not lost: the panel
 * shows it too, and the dialog still has it when opened again.
 */
class BoincAttachDialog : public QDialog {
    Q_OBJECT

public:
    explicit BoincAttachDialog(QWidget* parent = nullptr);

    /// The request the fields make, or an empty URL when something is missing (statusText() says what).
    BoincRequest request();

    /// Waiting for nicerd: the fields and Attach are disabled and @p text says what happens.
    void setBusy(const QString& text);
    /// The answer: a success clears the secrets, an error keeps the fields for another try.
    void showResult(bool ok, const QString& text);
    bool isBusy() const { return m_busy; }

    /// For tests and the panel.
    void setAccountManagerMode(bool manager);
    bool isAccountManagerMode() const;
    QLineEdit* urlEdit() const;
    QLineEdit* keyEdit() const { return m_key; }
    QLineEdit* nameEdit() const { return m_name; }
    QLineEdit* passwordEdit() const { return m_password; }
    QPushButton* attachButton() const { return m_attach; }
    QString statusText() const;
    bool statusIsError() const { return m_statusIsError; }

signals:
    /// Attach was pressed with complete fields.
    void submitted(const nicer::tray::BoincRequest& request);

private:
    void submit();
    void setStatus(const QString& text, bool error);
    void updateAttachEnabled();

    QRadioButton* m_projectMode = nullptr;
    QRadioButton* m_managerMode = nullptr;
    QStackedWidget* m_pages = nullptr;
    QLineEdit* m_projectUrl = nullptr;
    QLineEdit* m_key = nullptr;
    QLineEdit* m_managerUrl = nullptr;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_password = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_attach = nullptr;
    bool m_busy = false;
    bool m_statusIsError = false;
};

} // namespace nicer::tray
