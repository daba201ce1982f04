#pragma once

#include "usermanager/UnitManager.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nicer::test {

/// One call made to the FakeUnitManager, in the order the code under test made it.
struct UnitCall {
    std::string method; ///< the UnitManager method's name, e.g. "startTransientUnit"
    std::string unit;
    usermanager::Properties props; ///< startTransientUnit and setUnitProperties(Async) only
    bool wait = false;             ///< startTransientUnit, startUnit and stopUnit only
    int signal = 0;                ///< killUnit only
};

/// What the fake knows about one unit; tests set these to stage what systemd would report.
struct FakeUnit {
    usermanager::UnitState activeState = usermanager::UnitState::Inactive;
    std::string controlGroup;
    std::uint64_t cpuUsageNSec = usermanager::kNoUsage;
    std::uint32_t mainPid = 0;
    bool frozen = false;
    /// systemd loads the unit from a file (the user's own, or one left behind): StartTransientUnit is refused
    /// with systemd's UnitExists message, StartUnit starts it.
    bool hasFile = false;
};

/// The value of property @p name in @p props, if present and of type T.
template <typename T>
std::optional<T> propertyValue(const usermanager::Properties& props, const std::string& name) {
    for (const auto& property : props) {
        if (property.name == name) {
            if (const auto* value = std::get_if<T>(&property.value)) {
                return *value;
            }
            return std::nullopt;
        }
    }
    return std::nullopt;
}

inline bool hasProperty(const usermanager::Properties& props, const std::string& name) {
    return std::any_of(props.begin(), props.end(), [&](const auto& p) { return p.name == name; });
}

/**
 * A systemd user manager in memory: records every call, keeps per-unit state that tests stage, and fails a
 * method on request, so that the daemon's logic can be tested without a real systemd.
 */
class FakeUnitManager final : public usermanager::UnitManager {
public:
    /// Decides whether a call fails; an empty rule fails every call of the method.
    using FailRule = std::function<bool(const UnitCall&)>;

    /// Makes @p method fail with @p message (for the calls @p when matches) until clearFailure().
    void fail(const std::string& method, std::string message, FailRule when = {}) {
        m_failures[method] = Failure{std::move(message), std::move(when)};
    }
    void clearFailure(const std::string& method) { m_failures.erase(method); }

    /// The unit's staged state, created as systemd reports an unknown unit ("inactive", no cgroup).
    FakeUnit& unit(const std::string& name) { return m_units[name]; }

    const std::vector<UnitCall>& calls() const { return m_calls; }
    void clearCalls() { m_calls.clear(); }
    std::vector<UnitCall> callsTo(const std::string& method) const {
        std::vector<UnitCall> out;
        std::copy_if(m_calls.begin(), m_calls.end(), std::back_inserter(out),
                     [&](const UnitCall& c) { return c.method == method; });
        return out;
    }
    /// The calls that change something, without the state queries, to check the order of actions.
    std::vector<UnitCall> actions() const {
        static const std::vector<std::string> queries{"activeState",        "controlGroup", "unitFile",
                                                      "cpuUsageNSec",       "mainPid",      "managerVersion",
                                                      "managerControlGroup"};
        std::vector<UnitCall> out;
        std::copy_if(m_calls.begin(), m_calls.end(), std::back_inserter(out), [](const UnitCall& c) {
            return std::find(queries.begin(), queries.end(), c.method) == queries.end();
        });
        return out;
    }

    Result<void> startTransientUnit(const std::string& name, const usermanager::Properties& props,
                                    bool wait) override {
        if (auto failed = record({"startTransientUnit", name, props, wait, 0}); !failed) {
            return failed;
        }
        if (unit(name).hasFile) {
            return Error{"systemd StartTransientUnit(" + name + "): Unit " + name +
                         " was already loaded or has a fragment file."};
        }
        return start(name);
    }
    Result<void> startUnit(const std::string& name, bool wait) override {
        if (auto failed = record({"startUnit", name, {}, wait, 0}); !failed) {
            return failed;
        }
        return start(name);
    }
    Result<void> setUnitProperties(const std::string& name, const usermanager::Properties& props) override {
        return record({"setUnitProperties", name, props, false, 0});
    }
    /// Answered at once, like a manager that answers between two periods; a failure that fail() stages for
    /// "setUnitPropertiesAsync" is told by the next takePropertyWrites(), as systemd's would be.
    void setUnitPropertiesAsync(const std::string& name, const usermanager::Properties& props) override {
        const auto written = record({"setUnitPropertiesAsync", name, props, false, 0});
        for (const auto& property : props) {
            m_writeFailures[name + " " + property.name] = written;
        }
    }
    usermanager::PropertyWrites takePropertyWrites(const std::string& name,
                                                   const std::string& property) override {
        return {std::exchange(m_writeFailures[name + " " + property], Result<void>{}), writesPending};
    }
    Result<void> stopUnit(const std::string& name, bool wait) override {
        if (auto failed = record({"stopUnit", name, {}, wait, 0}); !failed) {
            return failed;
        }
        unit(name).activeState = nicer::usermanager::UnitState::Inactive;
        unit(name).frozen = false;
        return {};
    }
    Result<void> freezeUnit(const std::string& name) override {
        if (auto failed = record({"freezeUnit", name, {}, false, 0}); !failed) {
            return failed;
        }
        unit(name).frozen = true;
        return {};
    }
    Result<void> thawUnit(const std::string& name) override {
        if (auto failed = record({"thawUnit", name, {}, false, 0}); !failed) {
            return failed;
        }
        unit(name).frozen = false;
        return {};
    }
    Result<void> killUnit(const std::string& name, int signal) override {
        return record({"killUnit", name, {}, false, signal});
    }
    Result<void> resetFailedUnit(const std::string& name) override {
        return record({"resetFailedUnit", name, {}, false, 0});
    }

    Result<usermanager::UnitState> activeState(const std::string& name) override {
        if (auto failed = record({"activeState", name, {}, false, 0}); !failed) {
            return failed.error();
        }
        return unit(name).activeState;
    }
    Result<std::string> controlGroup(const std::string& name) override {
        if (auto failed = record({"controlGroup", name, {}, false, 0}); !failed) {
            return failed.error();
        }
        return unit(name).controlGroup;
    }
    Result<std::string> unitFile(const std::string& name) override {
        if (auto failed = record({"unitFile", name, {}, false, 0}); !failed) {
            return failed.error();
        }
        return unit(name).hasFile ? "/home/user/.config/systemd/user/" + name : std::string();
    }
    Result<std::uint64_t> cpuUsageNSec(const std::string& name) override {
        if (auto failed = record({"cpuUsageNSec", name, {}, false, 0}); !failed) {
            return failed.error();
        }
        return unit(name).cpuUsageNSec;
    }
    Result<std::uint32_t> mainPid(const std::string& name) override {
        if (auto failed = record({"mainPid", name, {}, false, 0}); !failed) {
            return failed.error();
        }
        return unit(name).mainPid;
    }
    Result<std::string> managerVersion() override {
        if (auto failed = record({"managerVersion", "", {}, false, 0}); !failed) {
            return failed.error();
        }
        return version;
    }

    Result<std::string> managerControlGroup() override {
        if (auto failed = record({"managerControlGroup", "", {}, false, 0}); !failed) {
            return failed.error();
        }
        return managerCgroup;
    }

    /// What takePropertyWrites() says of writes on their way: a manager that has not answered yet.
    bool writesPending = false;
    /// What managerVersion() reports.
    std::string version = "252 (252.22-1~deb12u1)";
    /// What managerControlGroup() reports: slices get "/" + their name, so the manager's cgroup is the root.
    std::string managerCgroup = "/";

private:
    Result<void> start(const std::string& name) {
        auto& u = unit(name);
        u.activeState = nicer::usermanager::UnitState::Active;
        // Like systemd, a slice gets a cgroup named after it; a test may stage another one beforehand.
        if (u.controlGroup.empty() && name.size() > 6 && name.compare(name.size() - 6, 6, ".slice") == 0) {
            u.controlGroup = "/" + name;
        }
        return {};
    }
    struct Failure {
        std::string message;
        FailRule when;
    };

    /// Records the call (failed ones too: the attempt is what tests check) and says whether it fails.
    Result<void> record(UnitCall call) {
        m_calls.push_back(std::move(call));
        const auto& recorded = m_calls.back();
        const auto it = m_failures.find(recorded.method);
        if (it != m_failures.end() && (!it->second.when || it->second.when(recorded))) {
            return Error{it->second.message};
        }
        return {};
    }

    std::vector<UnitCall> m_calls;
    std::map<std::string, FakeUnit> m_units;
    std::map<std::string, Failure> m_failures;
    std::map<std::string, Result<void>>
        m_writeFailures; ///< by unit and property ("a.slice MemoryHigh"), until taken
};

} // namespace nicer::test
