#include "tray/BoincAttachDialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QStackedWidget>
#include <QUrl>
#include <QVBoxLayout>

namespace nicer::tray {

namespace {

/// A master URL as BOINC takes it: http or https with a host.
bool isWebUrl(const QString& text) {
    const QUrl url(text, QUrl::StrictMode);
    return url.isValid() &&
           (url.scheme() == QLatin1String("https") || url.scheme() == QLatin1String("http")) &&
           !url.host().isEmpty();
}

} // namespace

BoincAttachDialog::BoincAttachDialog(QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Attach to a BOINC project"));
    setAccessibleName(tr("Attach to a BOINC project"));

    m_projectMode = new QRadioButton(tr("A &project, with its account key"), this);
    m_managerMode = new QRadioButton(tr("An account &manager (such as BAM! or Science United)"), this);
    m_projectMode->setChecked(true);

    m_pages = new QStackedWidget(this);
    auto* project = new QWidget(m_pages);
    auto* projectForm = new QFormLayout(project);
    projectForm->setContentsMargins(0, 0, 0, 0);
    m_projectUrl = new QLineEdit(project);
    m_projectUrl->setPlaceholderText(QStringLiteral("https://einsteinathome.org/"));
    m_projectUrl->setAccessibleName(tr("Project URL"));
    m_key = new QLineEdit(project);
    m_key->setPlaceholderText(tr("from your account page on the project's web site"));
    m_key->setAccessibleName(tr("Account key"));
    m_key->setToolTip(tr("The project's web site shows it on your account page (\"account keys\"). It lets "
                         "this computer work for your account without your password."));
    projectForm->addRow(tr("Project &URL:"), m_projectUrl);
    projectForm->addRow(tr("Account &key:"), m_key);
    m_pages->addWidget(project);

    auto* manager = new QWidget(m_pages);
    auto* managerForm = new QFormLayout(manager);
    managerForm->setContentsMargins(0, 0, 0, 0);
    m_managerUrl = new QLineEdit(manager);
    m_managerUrl->setPlaceholderText(QStringLiteral("https://bam.boincstats.com/"));
    m_managerUrl->setAccessibleName(tr("Account manager URL"));
    m_name = new QLineEdit(manager);
    m_name->setAccessibleName(tr("User name"));
    m_name->setPlaceholderText(tr("your name or e-mail address there"));
    m_password = new QLineEdit(manager);
    m_password->setEchoMode(QLineEdit::Password);
    m_password->setAccessibleName(tr("Password"));
    managerForm->addRow(tr("Account manager &URL:"), m_managerUrl);
    managerForm->addRow(tr("&Name:"), m_name);
    managerForm->addRow(tr("Pass&word:"), m_password);
    m_pages->addWidget(manager);

    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0); // busy: nicerd says nothing until BOINC has answered
    m_busyBar->setTextVisible(false);
    m_busyBar->setAccessibleName(tr("Waiting for BOINC"));
    m_busyBar->hide();

    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setAccessibleName(tr("Result"));
    m_status->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_attach = buttons->addButton(tr("&Attach"), QDialogButtonBox::AcceptRole);
    m_attach->setDefault(true);
    // Close only hides: an answer still on its way reaches the panel, and this dialog when opened again.
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_attach, &QPushButton::clicked, this, &BoincAttachDialog::submit);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_projectMode);
    layout->addWidget(m_managerMode);
    layout->addSpacing(6);
    layout->addWidget(m_pages);
    layout->addWidget(m_busyBar);
    layout->addWidget(m_status);
    layout->addStretch(1);
    layout->addWidget(buttons);

    connect(m_managerMode, &QRadioButton::toggled, this, [this](bool managerChosen) {
        m_pages->setCurrentIndex(managerChosen ? 1 : 0);
        if (!m_busy) {
            m_status->hide();
        }
        updateAttachEnabled();
    });
    for (QLineEdit* edit : {m_projectUrl, m_key, m_managerUrl, m_name, m_password}) {
        connect(edit, &QLineEdit::textChanged, this, &BoincAttachDialog::updateAttachEnabled);
    }
    updateAttachEnabled();
    resize(520, sizeHint().height());
}

void BoincAttachDialog::setAccountManagerMode(bool manager) {
    (manager ? m_managerMode : m_projectMode)->setChecked(true);
}

bool BoincAttachDialog::isAccountManagerMode() const {
    return m_managerMode->isChecked();
}

QLineEdit* BoincAttachDialog::urlEdit() const {
    return isAccountManagerMode() ? m_managerUrl : m_projectUrl;
}

QString BoincAttachDialog::statusText() const {
    return m_status->isVisibleTo(this) ? m_status->text() : QString();
}

void BoincAttachDialog::updateAttachEnabled() {
    const bool complete =
        isAccountManagerMode()
            ? !m_managerUrl->text().trimmed().isEmpty() && !m_name->text().trimmed().isEmpty() &&
                  !m_password->text().isEmpty()
            : !m_projectUrl->text().trimmed().isEmpty() && !m_key->text().trimmed().isEmpty();
    m_attach->setEnabled(complete && !m_busy);
}

BoincRequest BoincAttachDialog::request() {
    const QString url = urlEdit()->text().trimmed();
    if (!isWebUrl(url)) {
        setStatus(tr("Enter the web address of the %1, starting with https://.")
                      .arg(isAccountManagerMode() ? tr("account manager") : tr("project")),
                  true);
        return {};
    }
    if (isAccountManagerMode()) {
        return BoincRequest::attachAccountManager(url, m_name->text().trimmed(), m_password->text());
    }
    return BoincRequest::attach(url, m_key->text().trimmed());
}

void BoincAttachDialog::submit() {
    if (m_busy) {
        return;
    }
    const BoincRequest r = request();
    if (r.url.isEmpty()) {
        return;
    }
    emit submitted(r);
}

void BoincAttachDialog::setBusy(const QString& text) {
    m_busy = true;
    m_projectMode->setEnabled(false);
    m_managerMode->setEnabled(false);
    m_pages->setEnabled(false);
    m_busyBar->show();
    setStatus(text, false);
    updateAttachEnabled();
}

void BoincAttachDialog::showResult(bool ok, const QString& text) {
    m_busy = false;
    m_projectMode->setEnabled(true);
    m_managerMode->setEnabled(true);
    m_pages->setEnabled(true);
    m_busyBar->hide();
    if (ok) {
        // Done: the secrets have no business staying in a field.
        m_key->clear();
        m_password->clear();
    }
    setStatus(text, !ok);
    updateAttachEnabled();
}

void BoincAttachDialog::setStatus(const QString& text, bool error) {
    m_statusIsError = error;
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("QLabel { color: #b02a37; font-weight: bold; }")
                                  : QString());
    m_status->setVisible(!text.isEmpty());
}

} // namespace nicer::tray
