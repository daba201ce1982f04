#include "tray/StateIcon.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace nicer::tray {

QColor stateColor(TrayState state) {
    switch (state) {
    case TrayState::Connecting:
        return QColor(0x8a, 0x8f, 0x98);
    case TrayState::Running:
        return QColor(0x2e, 0x9d, 0x5b);
    case TrayState::Throttled:
        return QColor(0xe0, 0x9a, 0x1f);
    case TrayState::Paused:
        return QColor(0x5b, 0x7d, 0xb8);
    case TrayState::Error:
        return QColor(0xd0, 0x3b, 0x3b);
    case TrayState::Held:
        return QColor(0x1f, 0x8a, 0x8a);
    case TrayState::RulePaused:
        return QColor(0x6b, 0x5b, 0xa8);
    }
    return Qt::gray;
}

namespace {

void drawGlyph(QPainter& p, TrayState state, double s) {
    p.setPen(Qt::NoPen);
    p.setBrush(Qt::white);
    switch (state) {
    case TrayState::Running: { // a leaf-like upward chevron: work is growing
        QPainterPath path;
        path.moveTo(0.30 * s, 0.62 * s);
        path.lineTo(0.50 * s, 0.30 * s);
        path.lineTo(0.70 * s, 0.62 * s);
        path.lineTo(0.60 * s, 0.62 * s);
        path.lineTo(0.50 * s, 0.46 * s);
        path.lineTo(0.40 * s, 0.62 * s);
        path.closeSubpath();
        p.drawPath(path);
        p.drawRect(QRectF(0.45 * s, 0.50 * s, 0.10 * s, 0.22 * s));
        break;
    }
    case TrayState::Throttled: // half disc: the work gives way
        p.drawPie(QRectF(0.27 * s, 0.27 * s, 0.46 * s, 0.46 * s), 90 * 16, 180 * 16);
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(Qt::white, 0.06 * s));
        p.drawEllipse(QRectF(0.27 * s, 0.27 * s, 0.46 * s, 0.46 * s));
        break;
    case TrayState::Paused:
        p.drawRect(QRectF(0.33 * s, 0.28 * s, 0.12 * s, 0.44 * s));
        p.drawRect(QRectF(0.55 * s, 0.28 * s, 0.12 * s, 0.44 * s));
        break;
    case TrayState::Error:
        p.drawRect(QRectF(0.44 * s, 0.22 * s, 0.12 * s, 0.36 * s));
        p.drawEllipse(QRectF(0.44 * s, 0.64 * s, 0.12 * s, 0.12 * s));
        break;
    case TrayState::Connecting:
        for (int i = 0; i < 3; ++i) {
            p.drawEllipse(QRectF((0.25 + 0.19 * i) * s, 0.44 * s, 0.12 * s, 0.12 * s));
        }
        break;
    case TrayState::Held: // a lid over the work: a rule of yours caps it
        p.drawRect(QRectF(0.24 * s, 0.26 * s, 0.52 * s, 0.09 * s));
        p.drawRect(QRectF(0.35 * s, 0.44 * s, 0.30 * s, 0.30 * s));
        break;
    case TrayState::RulePaused: // the same lid over the pause bars: a rule of yours paused it
        p.drawRect(QRectF(0.24 * s, 0.26 * s, 0.52 * s, 0.09 * s));
        p.drawRect(QRectF(0.33 * s, 0.44 * s, 0.12 * s, 0.32 * s));
        p.drawRect(QRectF(0.55 * s, 0.44 * s, 0.12 * s, 0.32 * s));
        break;
    }
}

} // namespace

QIcon stateIcon(TrayState state) {
    QIcon icon;
    for (int size : {16, 22, 24, 32, 48, 64}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(stateColor(state));
        const double s = size;
        p.drawEllipse(QRectF(0.04 * s, 0.04 * s, 0.92 * s, 0.92 * s));
        drawGlyph(p, state, s);
        icon.addPixmap(pixmap);
    }
    return icon;
}

} // namespace nicer::tray
