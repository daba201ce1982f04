#include "actuator/ActuatorNote.h"
#include "fakes/FakeCgroupTree.h"

#include <catch2/catch.hpp>

using namespace nicer;
using Catch::Contains;

namespace {

const std::string kSliceCgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/nicer.slice";

/// A pure v2 tree in which the user manager's cgroup lists @p controllers (no file when nullopt).
kernel::CgroupLayout userTree(const test::FakeCgroupTree& tree, std::optional<std::string> controllers) {
    tree.write("unified" + kSliceCgroup + "/cgroup.freeze", "0\n");
    if (controllers) {
        tree.write("unified/user.slice/user-1000.slice/user@1000.service/cgroup.controllers", *controllers);
    }
    auto layout = kernel::CgroupLayout::parse(tree.mountLine("unified", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout);
    return *layout;
}

} // namespace

TEST_CASE("the user manager's cgroup is the deepest user@UID.service above the slice") {
    CHECK(kernel::CgroupLayout::userManagerCgroup(kSliceCgroup) ==
          "/user.slice/user-1000.slice/user@1000.service");
    CHECK(kernel::CgroupLayout::userManagerCgroup("/user.slice/user-1000.slice/user@1000.service") ==
          "/user.slice/user-1000.slice/user@1000.service");
    CHECK(kernel::CgroupLayout::userManagerCgroup("/system.slice/nicer.slice").empty());
    CHECK(kernel::CgroupLayout::userManagerCgroup("").empty());
}

TEST_CASE("without cpu in the user manager's controllers, the note names them and gives the fix") {
    test::FakeCgroupTree tree;
    const auto note = actuator::dutyCycleFallbackNote(
        userTree(tree, "memory pids\n"), kSliceCgroup, api::Actuator::FreezerDutyCycle,
        "the systemd user manager does not delegate the cpu controller");
    CHECK_THAT(note,
               Contains("user@1000.service") && Contains("lists only the controllers memory pids, not cpu"));
    CHECK_THAT(note, Contains("freezes the work for part of every 100 ms"));
    CHECK_THAT(note, Contains("/etc/systemd/system/user@.service.d/delegate-cpu.conf") &&
                         Contains("[Service]\\nDelegate=pids memory cpu") &&
                         Contains("systemctl daemon-reload") && Contains("log out and back in"));

    // The signal duty cycle says it stops the work.
    CHECK_THAT(actuator::dutyCycleFallbackNote(userTree(tree, "memory pids\n"), kSliceCgroup,
                                               api::Actuator::SignalDutyCycle, "no cpu"),
               Contains("stops the work (SIGSTOP) for part of every 100 ms"));
}

TEST_CASE("an empty or unreadable controller list still gives the fix") {
    test::FakeCgroupTree empty;
    CHECK_THAT(actuator::dutyCycleFallbackNote(userTree(empty, "\n"), kSliceCgroup,
                                               api::Actuator::FreezerDutyCycle, "no cpu"),
               Contains("lists no controllers") && Contains("Delegate=pids memory cpu"));
    test::FakeCgroupTree missing;
    CHECK_THAT(actuator::dutyCycleFallbackNote(userTree(missing, std::nullopt), kSliceCgroup,
                                               api::Actuator::FreezerDutyCycle, "no cpu"),
               Contains("does not delegate the cpu controller") && Contains("Delegate=pids memory cpu"));
}

TEST_CASE("with cpu delegated, the note gives the reason the slice's quota could not be used instead") {
    test::FakeCgroupTree tree;
    const auto note =
        actuator::dutyCycleFallbackNote(userTree(tree, "cpu memory pids\n"), kSliceCgroup,
                                        api::Actuator::FreezerDutyCycle, "systemd did not answer");
    CHECK_THAT(note, Contains("(systemd did not answer)") && Contains("freezes the work"));
    CHECK_THAT(note, !Contains("Delegate="));
}

TEST_CASE("the note of a cap the kernel does not enforce names the sched_ext scheduler") {
    const auto withScx =
        actuator::capNotEnforcedNote(std::string("lavd"), 0.93, 0.2, api::Actuator::FreezerDutyCycle);
    CHECK_THAT(withScx, Contains("sched_ext scheduler lavd") && Contains("cpu.max") &&
                            Contains("93% of the machine under a cap of 20%") &&
                            Contains("freezes the work"));
    const auto without = actuator::capNotEnforcedNote(std::nullopt, 0.5, 0.1, api::Actuator::SignalDutyCycle);
    CHECK_THAT(without, Contains("The kernel does not enforce the CPU quota (cpu.max)") &&
                            !Contains("sched_ext") && Contains("SIGSTOP"));
}

TEST_CASE("the note of a refused idle weight works without systemd's version") {
    CHECK_THAT(actuator::idleWeightRefusedNote(""),
               Contains("This systemd refuses CPUWeight=idle") && Contains("systemd 252"));
}

TEST_CASE("a duty cycle chosen in the configuration is said to be chosen, with what auto gives",
          "[ActuatorNote]") {
    const auto note = actuator::dutyCycleChosenNote(api::Actuator::SignalDutyCycle);
    CHECK_THAT(note, Catch::Contains("chose signal-duty-cycle") && Catch::Contains("SIGSTOP") &&
                         Catch::Contains("auto") && Catch::Contains("cpu controller"));
    CHECK_THAT(actuator::dutyCycleChosenNote(api::Actuator::FreezerDutyCycle),
               Catch::Contains("freezes the work"));
}
