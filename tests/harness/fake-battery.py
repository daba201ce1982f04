#!/usr/bin/python3
# A laptop's mains and battery for tests: umockdev's testbed emulates /sys/class/power_supply/{AC,BAT0}, and the
# REAL upowerd (Debian's upower) runs on it, on the bus the test gives, with umockdev's preload library. Optionally
# the REAL power-profiles-daemon runs there too (its "placeholder" driver), with a stand-in polkit that allows
# everything (power-profiles-daemon asks polkit before it switches profile). Debian 12's power-profiles-daemon
# (0.12) owns only net.hadess.PowerProfiles; later ones own org.freedesktop.UPower.PowerProfiles beside it, and
# --profiles-later-name puts a stand-in under that name alone (ActiveProfile, read, set and announced as the
# real one does) so that a client is tested against it too.
#
# Usage: fake-battery.py --bus ADDRESS [--profiles | --profiles-later-name] [--verbose] [--check]
#   ADDRESS is a D-Bus address (a private bus whose policy lets anything own and call; tests/PrivateBusConfig.h).
#   The daemons get it as DBUS_SYSTEM_BUS_ADDRESS, so they take it for the system bus.
#
#   --check only checks the prerequisites: "ready", or "missing ..." and exit 77 as below.
# stdout carries only the protocol, one line each:
#   first "ready ROOT" (ROOT: the testbed's root; ROOT/sys/class/power_supply is the emulated power_supply dir, in
#   the state upowerd sees) once upowerd owns org.freedesktop.UPower (and power-profiles-daemon its name), or
#   "missing PACKAGE: WHY" and exit 77 when a prerequisite is not installed, or "error TEXT" and exit 1.
#   Then one command per line on stdin, each answered "ok" or "error TEXT":
#     unplug          AC offline, the battery discharging (uevents sent: upowerd reads it at once)
#     plug            AC online, the battery charging
#     charge N        the battery at N percent
#     stop-upower     upowerd terminated (its name leaves the bus)
#     start-upower    upowerd started again; "ok" once it owns its name
#     profile NAME    power-profiles-daemon's ActiveProfile set to NAME (with either profiles option)
#     quit            everything stopped; stdin's end does the same
# Diagnostics (the daemons' logs with --verbose) go to stderr.

import argparse
import ctypes.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

UPOWERD = "/usr/libexec/upowerd"
PROFILES_DAEMON = "/usr/libexec/power-profiles-daemon"
PRELOAD = "libumockdev-preload.so.0"
# The battery's full energy, in µWh as the kernel gives it: "charge N" sets energy_now to N% of it.
ENERGY_FULL = 60_000_000

POLKIT_XML = """<node><interface name="org.freedesktop.PolicyKit1.Authority">
<method name="CheckAuthorization">
<arg type="(sa{sv})" name="subject" direction="in"/><arg type="s" name="action_id" direction="in"/>
<arg type="a{ss}" name="details" direction="in"/><arg type="u" name="flags" direction="in"/>
<arg type="s" name="cancellation_id" direction="in"/><arg type="(bba{ss})" name="result" direction="out"/>
</method></interface></node>"""


def say(line):
    print(line, flush=True)


def log(text):
    print("fake-battery: " + text, file=sys.stderr, flush=True)


def missing(package, why):
    say("missing %s: %s" % (package, why))
    sys.exit(77)


try:
    import gi

    gi.require_version("UMockdev", "1.0")
    from gi.repository import Gio, GLib, UMockdev
except (ImportError, ValueError) as e:
    missing("gir1.2-umockdev-1.0 python3-gi", str(e))


class Bus:
    """A GDBus connection to the test's bus, for waiting on names and setting properties."""

    def __init__(self, address):
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        self.conn = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)

    def has_owner(self, name):
        reply = self.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                    "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, -1, None)
        return reply.unpack()[0]

    def wait_for(self, name, process, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.has_owner(name):
                return
            if process is not None and process.poll() is not None:
                raise RuntimeError("%s exited (%d) before it owned %s" % (process.args[0], process.returncode, name))
            time.sleep(0.05)
        raise RuntimeError("nobody owns %s after %.0f s" % (name, timeout))

    def set_property(self, name, path, interface, prop, value):
        self.conn.call_sync(name, path, "org.freedesktop.DBus.Properties", "Set",
                            GLib.Variant("(ssv)", (interface, prop, value)), None, 0, 5000, None)


PROFILES_XML = """<node><interface name="org.freedesktop.UPower.PowerProfiles">
<property name="ActiveProfile" type="s" access="readwrite"/></interface></node>"""
LATER_PROFILES = ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles",
                  "org.freedesktop.UPower.PowerProfiles")


class StandIn(threading.Thread):
    """A service of the test's own on the bus (one object, one interface), on its own connection and main loop (so
    that the harness's own blocking calls, which make power-profiles-daemon ask polkit, cannot deadlock it)."""

    def __init__(self, address, name, path, xml):
        super().__init__(daemon=True)
        self.address, self.name, self.path, self.xml = address, name, path, xml
        self.ready = threading.Event()
        self.error = None
        self.conn = None

    def run(self):
        context = GLib.MainContext.new()
        context.push_thread_default()
        try:
            bus = Bus(self.address)
            self.conn = bus.conn
            info = Gio.DBusNodeInfo.new_for_xml(self.xml).interfaces[0]
            bus.conn.register_object(self.path, info, self.call, self.get, self.set)
            bus.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "RequestName", GLib.Variant("(su)", (self.name, 4)), None, 0, -1, None)
        except Exception as e:  # noqa: BLE001 -- any failure is the harness's error line, not a dead thread
            self.error = str(e)
            self.ready.set()
            return
        self.ready.set()
        GLib.MainLoop.new(context, False).run()

    def start_and_wait(self):
        self.start()
        self.ready.wait(10)
        if self.error:
            raise RuntimeError("the stand-in %s: %s" % (self.name, self.error))

    def call(self, connection, sender, path, interface, method, parameters, invocation):
        invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    def get(self, connection, sender, path, interface, prop):
        return None

    def set(self, connection, sender, path, interface, prop, value):
        return False


class FakePolkit(StandIn):
    """org.freedesktop.PolicyKit1 that authorizes every action."""

    def __init__(self, address):
        super().__init__(address, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                         POLKIT_XML)

    def call(self, connection, sender, path, interface, method, parameters, invocation):
        invocation.return_value(GLib.Variant("((bba{ss}))", ((True, False, {}),)))


class LaterProfiles(StandIn):
    """power-profiles-daemon under its later name alone: ActiveProfile, "balanced" at first; a Set changes it and
    PropertiesChanged announces the new value, as the real daemon does."""

    def __init__(self, address):
        super().__init__(address, LATER_PROFILES[0], LATER_PROFILES[1], PROFILES_XML)
        self.profile = "balanced"

    def get(self, connection, sender, path, interface, prop):
        return GLib.Variant("s", self.profile)

    def set(self, connection, sender, path, interface, prop, value):
        self.profile = value.get_string()
        connection.emit_signal(None, path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                               GLib.Variant("(sa{sv}as)", (interface, {prop: value}, [])))
        return True


class Laptop:
    def __init__(self, args):
        self.args = args
        self.bus = Bus(args.bus)
        self.testbed = UMockdev.Testbed.new()
        self.ac = self.testbed.add_device("power_supply", "AC", None, ["type", "Mains", "online", "1"],
                                          ["POWER_SUPPLY_ONLINE", "1"])
        self.battery = self.testbed.add_device(
            "power_supply", "BAT0", None,
            ["type", "Battery", "present", "1", "status", "Charging", "energy_full", str(ENERGY_FULL),
             "energy_full_design", str(ENERGY_FULL), "energy_now", str(ENERGY_FULL * 80 // 100), "capacity", "80",
             "voltage_now", "12000000", "power_now", "10000000", "technology", "Li-ion"], [])
        # upowerd's history files, in a place of the test's own (by default it writes /var/lib/upower).
        self.state_dir = tempfile.mkdtemp(prefix="fake-battery-")
        self.env = dict(os.environ)
        # LD_PRELOAD is inherited: main() made sure it has umockdev's library.
        self.env.update({"DBUS_SYSTEM_BUS_ADDRESS": args.bus, "UMOCKDEV_DIR": self.testbed.get_root_dir(),
                         "UPOWER_HISTORY_DIR": self.state_dir})
        self.upowerd = None
        self.profiles = None
        self.profiles_name = None  # (name, path, interface) of the profiles' service, when one runs

    def spawn(self, program):
        argv = [program] + (["-v"] if self.args.verbose else [])
        return subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                                stderr=None if self.args.verbose else subprocess.DEVNULL)

    def start_upower(self):
        self.upowerd = self.spawn(UPOWERD)
        self.bus.wait_for("org.freedesktop.UPower", self.upowerd)

    def stop_upower(self):
        if self.upowerd is not None:
            self.upowerd.terminate()
            self.upowerd.wait()
            self.upowerd = None

    def start_profiles(self):
        FakePolkit(self.args.bus).start_and_wait()
        self.profiles = self.spawn(PROFILES_DAEMON)
        self.bus.wait_for("net.hadess.PowerProfiles", self.profiles)
        self.profiles_name = ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles", "net.hadess.PowerProfiles")

    def start_later_profiles(self):
        LaterProfiles(self.args.bus).start_and_wait()
        self.profiles_name = LATER_PROFILES

    def change(self, device, attributes):
        for name, value in attributes.items():
            self.testbed.set_attribute(device, name, value)
        self.testbed.uevent(device, "change")

    def command(self, words):
        if words == ["unplug"]:
            self.change(self.ac, {"online": "0"})
            self.change(self.battery, {"status": "Discharging"})
        elif words == ["plug"]:
            self.change(self.ac, {"online": "1"})
            self.change(self.battery, {"status": "Charging"})
        elif len(words) == 2 and words[0] == "charge" and words[1].isdigit() and int(words[1]) <= 100:
            percent = int(words[1])
            self.change(self.battery, {"energy_now": str(ENERGY_FULL * percent // 100), "capacity": str(percent)})
        elif words == ["stop-upower"]:
            self.stop_upower()
        elif words == ["start-upower"]:
            self.start_upower()
        elif len(words) == 2 and words[0] == "profile" and self.profiles_name is not None:
            self.bus.set_property(*self.profiles_name, "ActiveProfile", GLib.Variant("s", words[1]))
        else:
            raise RuntimeError("unknown command: " + " ".join(words))

    def stop(self):
        self.stop_upower()
        if self.profiles is not None:
            self.profiles.terminate()
            self.profiles.wait()
        shutil.rmtree(self.state_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="An emulated battery and mains under the real upowerd.")
    parser.add_argument("--bus", required=True, help="the D-Bus address the daemons take for the system bus")
    profiles = parser.add_mutually_exclusive_group()
    profiles.add_argument("--profiles", action="store_true", help="also run power-profiles-daemon")
    profiles.add_argument("--profiles-later-name", action="store_true",
                          help="also run a stand-in of power-profiles-daemon under its later name alone")
    parser.add_argument("--verbose", action="store_true", help="the daemons' logs on stderr")
    parser.add_argument("--check", action="store_true",
                        help="only check the prerequisites: print \"ready\" (or \"missing ...\") and exit")
    args = parser.parse_args()
    # umockdev's uevents reach upowerd only when this process runs under its preload library too (it resolves
    # the devices' paths through it): run again under it.
    if ctypes.util.find_library("umockdev-preload") is None:
        missing("umockdev", PRELOAD + " is not installed")
    if args.check:
        say("ready")
        return
    if PRELOAD not in os.environ.get("LD_PRELOAD", ""):
        env = dict(os.environ, LD_PRELOAD=(PRELOAD + " " + os.environ.get("LD_PRELOAD", "")).strip())
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    if not os.access(UPOWERD, os.X_OK):
        missing("upower", UPOWERD + " is not installed")
    if args.profiles and not os.access(PROFILES_DAEMON, os.X_OK):
        missing("power-profiles-daemon", PROFILES_DAEMON + " is not installed")
    # A test that is killed still stops the daemons (SIGTERM runs the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    laptop = None
    try:
        try:
            laptop = Laptop(args)
            laptop.start_upower()
            if args.profiles:
                laptop.start_profiles()
            elif args.profiles_later_name:
                laptop.start_later_profiles()
        except (RuntimeError, GLib.Error) as e:
            say("error " + (e.message if isinstance(e, GLib.Error) else str(e)))
            sys.exit(1)
        say("ready " + laptop.testbed.get_root_dir())
        for line in sys.stdin:
            words = line.split()
            if words == ["quit"]:
                break
            try:
                laptop.command(words)
                say("ok")
            except (RuntimeError, GLib.Error) as e:
                say("error " + (e.message if isinstance(e, GLib.Error) else str(e)))
    finally:
        if laptop is not None:
            laptop.stop()


if __name__ == "__main__":
    main()
