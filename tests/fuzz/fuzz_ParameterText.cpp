// The controller parameters' text form (control/ParameterText): the parameter file nicerd reads at start,
// one `nicer set`-style value, and the format-then-parse round trip the file relies on.
//
// The first byte picks the part; the rest is the file's text, a "key=value" pair, or the bytes of a
// ControllerParams (six doubles' worth).

#include "FuzzSupport.h"
#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "control/ParameterText.h"

#include <cmath>
#include <cstring>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>

using namespace nicer;

namespace {

/// Equal as stored, NaN included (a value that reads back as NaN is the same value).
bool same(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}

/// A valid ControllerParams reads back from its file exactly.
void checkFileRoundTrip(const control::ControllerParams& params) {
    FUZZ_CHECK(control::validate(params).ok());
    const auto again = control::readParameterFile(control::writeParameterFile(params), "again", {});
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(*again == params);
}

void fuzzFile(std::string_view text) {
    const auto params = control::readParameterFile(std::string(text), "fuzz", control::ControllerParams{});
    if (params) {
        checkFileRoundTrip(*params);
    }
}

void fuzzOneValue(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) {
        return;
    }
    control::ControllerParams params;
    const std::string_view key = text.substr(0, eq);
    if (!control::setParameterFromText(params, key, text.substr(eq + 1))) {
        return;
    }
    const control::ParameterInfo* info = control::findParameter(key);
    FUZZ_CHECK(info != nullptr);
    // The text form of what was set is canonical: it sets the same value again, and writes itself.
    const std::string written = control::parameterAsText(*info, params);
    control::ControllerParams again;
    FUZZ_CHECK(control::setParameterFromText(again, key, written).ok());
    FUZZ_CHECK(same(info->get(again), info->get(params)));
    FUZZ_CHECK(control::parameterAsText(*info, again) == written);
    // Ranges are validate()'s: it accepts exactly the values inRange() does (min <= max holds by default
    // unless a multiplier moved).
    if (info->key != std::string_view("min-multiplier") && info->key != std::string_view("max-multiplier")) {
        FUZZ_CHECK(control::validate(params).ok() == control::inRange(*info, info->get(params)));
    }
}

void fuzzRoundTrip(FuzzedDataProvider& input) {
    control::ControllerParams params;
    params.reserveBand = input.ConsumeFloatingPoint<double>();
    params.minMultiplier = input.ConsumeFloatingPoint<double>();
    params.maxMultiplier = input.ConsumeFloatingPoint<double>();
    params.overloadThreshold = input.ConsumeIntegral<int>();
    params.idleEpsilon = input.ConsumeFloatingPoint<double>();
    params.period = std::chrono::milliseconds(input.ConsumeIntegral<std::int64_t>());
    if (input.ConsumeBool()) { // values near the table's, where the ranges' edges are
        params.reserveBand = input.ConsumeProbability<double>() * 0.6;
        params.minMultiplier = 1.0 + input.ConsumeProbability<double>() * 64.0;
        params.maxMultiplier = 1.0 + input.ConsumeProbability<double>() * 64.0;
        params.idleEpsilon = input.ConsumeProbability<double>() * 0.6;
        params.period = std::chrono::milliseconds(input.ConsumeIntegralInRange<std::int64_t>(0, 11000));
    }
    if (!control::validate(params)) {
        return;
    }
    // parametersAsText "reads back exactly" with setParameterFromText.
    control::ControllerParams again;
    for (const auto& [key, value] : control::parametersAsText(params)) {
        FUZZ_CHECK(control::setParameterFromText(again, key, value).ok());
    }
    FUZZ_CHECK(again == params);
    checkFileRoundTrip(params);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string_view rest = fuzz::asText(data + 1, size - 1);
    switch (data[0] % 3) {
    case 0:
        fuzzFile(rest);
        break;
    case 1:
        fuzzOneValue(rest);
        break;
    default: {
        FuzzedDataProvider input(data + 1, size - 1);
        fuzzRoundTrip(input);
        break;
    }
    }
    return 0;
}
