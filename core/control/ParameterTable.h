#pragma once

#include "control/ControllerParams.h"
#include "util/Result.h"

#include <span>
#include <string>
#include <string_view>

namespace nicer::control {

/// How a parameter is stored and carried: a real number, a whole number, a duration (in seconds in text,
/// milliseconds in ControllerParams, microseconds on D-Bus), or hours of the week (control::WeeklyHours, text
/// everywhere: a string on D-Bus).
enum class ParameterType { Real, Count, Duration, Hours };

/// Where a parameter belongs for the volunteer (the tray's groups): the thesis's controller, the rules that
/// keep the machine cool, quiet and charged, the two profiles of here and away and their delay, or the hours
/// of the week the work and its transfers may run.
enum class ParameterGroup { Controller, Rules, Profiles, Schedule };

/**
 * One controller parameter, the one place its names, range, unit and help are written down. The text form
 * (files, `nicer set`), both command lines, nicerd's D-Bus properties and SetParameters, the D-Bus client
 * and the tray's sliders are all generated from parameterTable().
 *
 * Values are exchanged as doubles in the text form's unit (a fraction, a multiplier, whole periods, or
 * seconds); busScale and displayScale turn them into the D-Bus and the GUI units.
 */
struct ParameterInfo {
    const char* key;          ///< text form, file key and command-line option (without "--"): "reserve-band"
    const char* busName;      ///< D-Bus property and SetParameters key: "ReserveBand"
    const char* busSignature; ///< D-Bus type of the property: "d", "u" or "t"
    ParameterType type;
    const char* label; ///< a short name for people: "Reserve band"
    const char* help;  ///< one sentence, for --help and tooltips
    /// Words after the range that rangeText() writes from min, max and the open ends: "(whole periods)",
    /// "and at most max-multiplier"; empty for none.
    const char* rangeNote;
    double min;   ///< in the text unit
    double max;   ///< kUnbounded: no upper limit worth stating
    bool minOpen; ///< min itself is not allowed
    bool maxOpen; ///< max itself is not allowed
    /// Values between 0 and this are not allowed, though 0 is (it means "off" or "auto"); 0: no such gap.
    double lowestAboveZero;
    double busScale; ///< D-Bus value = text value x busScale (1e6 for the period: seconds to µs)
    // The tray's slider and spin box.
    double displayScale;     ///< shown value = text value x displayScale (100 for a percentage)
    const char* displayUnit; ///< suffix of the shown value: " %", " x", " periods", " ms"
    double sliderMin;        ///< the slider's range, in the shown unit
    double sliderMax;
    double displayStep;
    int displayDecimals;
    bool logarithmic; ///< the slider moves on a log scale
    /// The value in the text unit; nullptr for Hours, whose value is text (getText).
    double (*get)(const ControllerParams&);
    /// Sets the value given in the text unit; fails only for values that cannot be stored (a negative or
    /// infinite period). Ranges are checked by validate(). nullptr for Hours (setText).
    Result<void> (*set)(ControllerParams&, double);
    /// Hours only (else nullptr): the value as text, and set from text, which fails with what was wrong.
    std::string (*getText)(const ControllerParams&);
    Result<void> (*setText)(ControllerParams&, std::string_view);
    /// Added after nicer first saved parameter files: a file an older nicerd wrote has no line for it, and
    /// the default applies (every other parameter must be in a saved file, or it was cut short).
    bool newerThanSavedFiles;
    ParameterGroup group;
};

/// Whether @p a and @p b hold the same value of @p info's parameter, and that value copied from @p from into
/// @p to: for every type, text or number.
bool sameValue(const ParameterInfo& info, const ControllerParams& a, const ControllerParams& b);
void copyValue(const ParameterInfo& info, const ControllerParams& from, ControllerParams& to);

/// A max that rangeText() does not state: the largest whole count a parameter may hold.
inline constexpr double kUnbounded = 2147483647.0;

/// Every parameter, in display order.
std::span<const ParameterInfo> parameterTable();

/// The parameter named @p key in the text form, or nullptr.
const ParameterInfo* findParameter(std::string_view key);
/// The parameter named @p busName on D-Bus, or nullptr.
const ParameterInfo* findBusParameter(std::string_view busName);

/// "reserve-band, min-multiplier, ..." or, with @p bus, "ReserveBand, MinMultiplier, ...".
std::string parameterNameList(bool bus = false);

/// True when @p value is inside the parameter's own range and not in its gap above 0 (not checking
/// min <= max between parameters).
bool inRange(const ParameterInfo& info, double value);

/// The allowed values in words, as errors and --help show them, from min, max, the open ends and the note:
/// "in (0, 0.5] (a fraction of the whole machine)", ">= 0 (whole periods)", "between 10 ms and 10 s".
std::string rangeText(const ParameterInfo& info);

/// "Idle share ..., in (0, 0.5]": the help with the range, for --help.
std::string parameterHelp(const ParameterInfo& info);

} // namespace nicer::control
