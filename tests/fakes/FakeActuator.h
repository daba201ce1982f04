#pragma once

#include "actuator/QuotaActuator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nicer::test {

/// A QuotaActuator that records what the loop asks of it and reports a work CPU time the test sets.
class FakeActuator final : public actuator::QuotaActuator {
public:
    struct Applied {
        double quota;
        int cpuCount;
    };

    /// A duty cycle unless the test says otherwise (setKind).
    api::Actuator kind() const override { return m_kind; }
    void setKind(api::Actuator kind) { m_kind = kind; }

    Result<void> apply(double quota, int cpuCount) override {
        m_applied.push_back({quota, cpuCount});
        if (m_applyError) {
            return Error{*m_applyError};
        }
        m_frozen = quota <= 0.0;
        return {};
    }

    Result<std::uint64_t> workCpuNSec() override {
        if (m_workError) {
            return Error{*m_workError};
        }
        return m_workNSec;
    }

    bool frozen() const override { return m_frozen; }

    Result<void> release() override {
        ++m_releases;
        m_frozen = false;
        return {};
    }

    void setWorkCpuNSec(std::uint64_t nsec) { m_workNSec = nsec; }
    void addWorkCpuNSec(std::uint64_t nsec) { m_workNSec += nsec; }
    /// Makes apply() (which still records the call) or workCpuNSec() fail; nullopt heals it.
    void setApplyError(std::optional<std::string> message) { m_applyError = std::move(message); }
    void setWorkError(std::optional<std::string> message) { m_workError = std::move(message); }

    const std::vector<Applied>& applied() const { return m_applied; }
    int releases() const { return m_releases; }

private:
    api::Actuator m_kind = api::Actuator::SignalDutyCycle;
    std::vector<Applied> m_applied;
    std::uint64_t m_workNSec = 0;
    std::optional<std::string> m_applyError;
    std::optional<std::string> m_workError;
    bool m_frozen = false;
    int m_releases = 0;
};

} // namespace nicer::test
