#include "api/DaemonProperties.h"

#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace nicer::api {

namespace {

/// A row's field from a lambda that selects it: `field([](DaemonState& s) -> auto& { return s.paused; })`.
template <typename Select>
PropertyField field(Select select) {
    return +select;
}

std::vector<PropertyInfo> makeTable() {
    using A = Announce;
    std::vector<PropertyInfo> rows;
    rows.push_back({"ApiVersion", A::Never, field([](DaemonState & s) -> auto& { return s.apiVersion; })});
    for (const auto& info : control::parameterTable()) {
        rows.push_back({info.busName, A::OnChange, &info});
    }
    const std::initializer_list<PropertyInfo> state = {
        {"Paused", A::OnChange, field([](DaemonState & s) -> auto& { return s.paused; })},
        {"PausedUntil", A::OnChange, field([](DaemonState & s) -> auto& { return s.pausedUntilUSec; })},
        // The actuator changes only when nicerd finds the slice's quota not enforced and falls back.
        {"Actuator", A::OnChange, field([](DaemonState & s) -> auto& { return s.actuator; })},
        {"ActuatorNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.actuatorNote; })},
        // The placement and the memory limit are chosen once, when nicerd starts.
        {"Placement", A::Never, field([](DaemonState & s) -> auto& { return s.placement; })},
        {"PlacementNote", A::Never, field([](DaemonState & s) -> auto& { return s.placementNote; })},
        {"MemoryMaxPercent", A::Never, field([](DaemonState & s) -> auto& { return s.memoryMaxPercent; })},
        {"MemoryMax", A::Never, field([](DaemonState & s) -> auto& { return s.memoryMax; })},
        {"MemoryHigh", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryHigh; })},
        {"Workload", A::OnChange, field([](DaemonState & s) -> auto& { return s.workload; })},
        {"DemoWorkload", A::OnChange, field([](DaemonState & s) -> auto& { return s.demoWorkload; })},
        {"Instances", A::OnChange, field([](DaemonState & s) -> auto& { return s.instances; })},
        {"InstancesRunning", A::OnChange, field([](DaemonState & s) -> auto& { return s.instancesRunning; })},
        {"InstancesStopped", A::OnChange, field([](DaemonState & s) -> auto& { return s.instancesStopped; })},
        {"WorkloadPreset", A::OnChange, field([](DaemonState & s) -> auto& { return s.workloadPreset; })},
        // Whether a preset's program is installed can change at any time, unannounced: read it when needed.
        {"WorkloadPresets", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.workloadPresets; })},
        {"CpuCount", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.cpuCount; })},
        // The last period's: the Sample signal carries them.
        {"Quota", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.quota; })},
        {"Multiplier", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.multiplier; })},
        {"OverloadCount", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.overloadCount; })},
        {"Idle", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.idle; })},
        {"Foreground", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.foreground; })},
        {"Background", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.background; })},
        {"Outside", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.outside; })},
        {"Signal", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.signal; })},
        {"SignalSetting", A::Never, field([](DaemonState & s) -> auto& { return s.signalSetting; })},
        {"LastError", A::OnChange, field([](DaemonState & s) -> auto& { return s.lastError; })},
        {"Downloads", A::OnChange, field([](DaemonState & s) -> auto& { return s.downloads; })},
        {"DownloadRate", A::OnChange, field([](DaemonState & s) -> auto& { return s.downloadRate; })},
        {"BandwidthMode", A::Never, field([](DaemonState & s) -> auto& { return s.bandwidthMode; })},
        {"BandwidthCap", A::Never, field([](DaemonState & s) -> auto& { return s.bandwidthCap; })},
        {"BoincState", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.state; })},
        {"BoincDetail", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.detail; })},
        {"BoincSystemService", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.boinc.systemService; })},
        {"BoincOverrideApplied", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.boinc.overrideApplied; })},
        {"BoincClock", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.clock; })},
        {"BoincMaxDownRate", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.boinc.maxDownRate; })},
        {"BoincMaxUpRate", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.maxUpRate; })},
        {"BoincProjects", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.projects; })},
        {"BoincTasks", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.tasks; })},
        {"BoincTransfers", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.transfers; })},
        {"BoincNotices", A::OnChange, field([](DaemonState & s) -> auto& { return s.boinc.notices; })},
        {"HeldBy", A::OnChange, field([](DaemonState & s) -> auto& { return s.heldBy; })},
        {"HoldReason", A::OnChange, field([](DaemonState & s) -> auto& { return s.holdReason; })},
        // The Sample signal carries the temperature every period.
        {"Temperature", A::PerPeriod, field([](DaemonState & s) -> auto& { return s.temperature; })},
        {"TemperatureTargetInUse", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.temperatureTargetInUse; })},
        // The sensors are found once, when nicerd starts.
        {"TemperatureSensor", A::Never, field([](DaemonState & s) -> auto& { return s.temperatureSensor; })},
        {"SensorNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.sensorNote; })},
        {"FanSpeed", A::OnChange, field([](DaemonState & s) -> auto& { return s.fanSpeed; })},
        {"OnBattery", A::OnChange, field([](DaemonState & s) -> auto& { return s.onBattery; })},
        {"BatteryPercent", A::OnChange, field([](DaemonState & s) -> auto& { return s.batteryPercent; })},
        {"PowerSaver", A::OnChange, field([](DaemonState & s) -> auto& { return s.powerSaver; })},
        {"PowerSource", A::OnChange, field([](DaemonState & s) -> auto& { return s.powerSource; })},
        {"PowerNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.powerNote; })},
        {"Games", A::OnChange, field([](DaemonState & s) -> auto& { return s.games; })},
        {"GameNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.gameNote; })},
        {"ExclusivePrograms", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.exclusivePrograms; })},
        {"ProgramsRunning", A::OnChange, field([](DaemonState & s) -> auto& { return s.programsRunning; })},
        // The memory rule's readings (rounded by MemoryWatch: a tenth of a percent, a MiB) and its hold are
        // announced when they change, at most once a period, for the tray's Memory row.
        {"MemoryStallBeside", A::OnChange,
         field([](DaemonState & s) -> auto& { return s.memoryStallBeside; })},
        {"MemoryStallWhere", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryStallWhere; })},
        {"WorkMemory", A::OnChange, field([](DaemonState & s) -> auto& { return s.workMemory; })},
        {"WorkCanSwap", A::OnChange, field([](DaemonState & s) -> auto& { return s.workCanSwap; })},
        {"MemoryHold", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryHold; })},
        {"MemoryHoldLimit", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryHoldLimit; })},
        {"MemoryHoldReason", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryHoldReason; })},
        {"MemoryNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.memoryNote; })},
        {"KeepingAwake", A::OnChange, field([](DaemonState & s) -> auto& { return s.keepingAwake; })},
        {"SleepNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.sleepNote; })},
        {"Presence", A::OnChange, field([](DaemonState & s) -> auto& { return s.presence; })},
        {"PresenceSource", A::OnChange, field([](DaemonState & s) -> auto& { return s.presenceSource; })},
        {"PresenceReason", A::OnChange, field([](DaemonState & s) -> auto& { return s.presenceReason; })},
        {"InputTimeNote", A::OnChange, field([](DaemonState & s) -> auto& { return s.inputTimeNote; })},
    };
    rows.insert(rows.end(), state.begin(), state.end());
    return rows;
}

} // namespace

std::span<const PropertyInfo> daemonProperties() {
    static const std::vector<PropertyInfo> table = makeTable();
    return table;
}

const PropertyInfo* findProperty(std::string_view name) {
    const auto table = daemonProperties();
    const auto it =
        std::find_if(table.begin(), table.end(), [&](const PropertyInfo& p) { return p.name == name; });
    return it == table.end() ? nullptr : &*it;
}

std::string signatureOf(const PropertyInfo& property) {
    return std::visit(
        [](const auto& f) -> std::string {
            using F = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<F, const control::ParameterInfo*>) {
                return f->busSignature;
            } else {
                using T = std::remove_reference_t<std::invoke_result_t<F, DaemonState&>>;
                return busSignature<T>();
            }
        },
        property.field);
}

bool sameValue(const PropertyInfo& property, const DaemonState& a, const DaemonState& b) {
    return std::visit(
        [&](const auto& f) {
            using F = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<F, const control::ParameterInfo*>) {
                return control::sameValue(*f, a.params, b.params);
            } else {
                return valueOf(f, a) == valueOf(f, b);
            }
        },
        property.field);
}

BandwidthMode bandwidthOf(const DaemonState& state) {
    BandwidthMode mode;
    mode.kind = bandwidthKindFromKeyword(state.bandwidthMode).value_or(BandwidthMode::Kind::None);
    if (state.bandwidthCap > 0) {
        mode.capBytesPerSecond = state.bandwidthCap;
    }
    return mode;
}

} // namespace nicer::api
