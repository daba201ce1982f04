#!/usr/bin/python3
"""Check that packaging/dev.sh installs every Debian package the build, the tests and the main job use.

Usage:  packaging/check-deps.py [--without PKG]... [--dev-sh PATH] [--verbose] BUILD_DIR

BUILD_DIR is a finished Ninja build (what `packaging/dev.sh build` makes). The check collects the files it read
or ran from outside the source and build trees:

  - every header in the compiler's depfiles (`ninja -t deps`, only the compile steps of build.ninja);
  - every CMake file the configure step read (the inputs of build.ninja's RERUN_CMAKE edge): package configs
    such as Qt6OpenGLConfig.cmake and CMake's own modules;
  - the libraries on the link lines (absolute paths, and -lfoo resolved through -L and the compiler's implicit
    link directories), the compiler's implicit libraries and start files, its internal programs (cc1plus,
    collect2, as, ld), and every program a build command runs (c++, cmake, moc, uic, rcc);
  - the programs CMake found (CMakeCache.txt FILEPATH entries that are executables; libraries found but never
    linked are left out: a fresh machine without them builds the same);
  - the programs that the tests and the main job run (RUNTIME_PROGRAMS below, an explicit list), and the Qt
    platform plugins the tray's tests load;

maps each to its package with `dpkg -S` (every link of a symlink chain, e.g. /usr/bin/c++ ->
/etc/alternatives/c++ -> /usr/bin/g++ -> g++-12, and both spellings of a merged-/usr path), and fails unless
each package is in dev.sh's list (`packaging/dev.sh packages`), pulled in by it through Depends and
Pre-Depends (never Recommends: dev.sh installs with --no-install-recommends), or part of a minimal Debian
system (Essential or Priority required, with their Depends: what debootstrap's minbase variant and the
debian:12 image have). Dependencies are read from dpkg's database as installed on this machine
(`dpkg-query -W`), offline: an alternative "a | b" counts as the first one installed, a virtual package as its
installed providers.

A file outside the two trees that no package owns also fails the check (a fresh machine does not have it:
/usr/local, a hand-made install), except symlinks, whose targets are checked instead (alternatives, ldconfig).

--without PKG takes PKG out of dev.sh's list first (repeatable): the check must then fail if the build needs it.

Exit status: 0 every package is covered; 1 some are not (each is named with files that needed it and the fix);
2 usage error (not a Ninja build, not built yet, no dpkg).

What it does not see: files the tests and the main job read at run time other than the listed programs and
plugins (fonts, D-Bus and systemd unit files, libraries loaded with dlopen), programs a script or test starts
that are missing from RUNTIME_PROGRAMS, the contents of linker scripts (libc.so), and whether an installed
version satisfies a versioned dependency (it takes the machine's packages as they are).
"""

import argparse
import collections
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

# The programs that the tests, the main job and the package job run, by name, resolved in SYSTEM_PATH. Kept by
# hand: read from packaging/dev.sh, tests/harness/*.sh, tests/packaging/install-deb.sh, resources/man/manpage.sh,
# the tests' sources (std::system, QProcess, execv, workloads) and nicerd's demo workload. Shell builtins (kill, printf, command) are left out; so are programs a script only uses when
# present (ss in h2-servers.sh falls back without it; sudo in dev.sh only runs as a non-root user).
RUNTIME_PROGRAMS = {
    # packaging/dev.sh
    "bash": "packaging/dev.sh, tests/harness/*.sh",
    "dirname": "packaging/dev.sh, tests/harness/runtime-unit.sh",
    "id": "packaging/dev.sh, tests/harness/user-manager.sh",
    "dpkg-query": "packaging/dev.sh, packaging/check-deps.py",
    "grep": "packaging/dev.sh, tests/harness/h2-servers.sh",
    "apt-get": "packaging/dev.sh",
    "cmake": "packaging/dev.sh",
    "ctest": "packaging/dev.sh test",
    "nproc": "packaging/dev.sh",
    "sed": "packaging/dev.sh, tests/harness/*.sh",
    "sleep": "packaging/dev.sh run, tests",
    # tests/harness/user-manager.sh (and the user manager it starts: dbus-user-session's socket-activated bus)
    "systemd": "tests/harness/user-manager.sh (systemd --user)",
    "systemctl": "tests/harness/user-manager.sh, runtime-unit.sh, integration tests",
    "dbus-daemon": "the user manager's session bus (dbus-user-session)",
    "timeout": "tests/harness/*.sh, tests (nicer fetch)",
    "setsid": "tests/harness/user-manager.sh, h2-servers.sh",
    "env": "tests/harness/user-manager.sh, tests",
    "cat": "tests/harness/*.sh",
    "rm": "tests/harness/*.sh",
    "rmdir": "tests/harness/user-manager.sh",
    "mkdir": "tests/harness/*.sh",
    "install": "tests/harness/user-manager.sh, h2-servers.sh",
    "find": "tests/harness/user-manager.sh",
    "tr": "tests/harness/user-manager.sh, h2-servers.sh",
    "tail": "tests/harness/user-manager.sh, h2-servers.sh",
    "dmesg": "tests/harness/user-manager.sh",
    # tests/harness/h2-servers.sh
    "openssl": "tests/harness/h2-servers.sh",
    "nghttpd": "tests/harness/h2-servers.sh",
    "nginx": "tests/harness/h2-servers.sh",
    "head": "tests/harness/h2-servers.sh, xvfb-tray-host.sh",
    "sha256sum": "tests/harness/h2-servers.sh",
    "mv": "tests/harness/h2-servers.sh, runtime-unit.sh",
    "basename": "tests/harness/h2-servers.sh",
    # tests/harness/xvfb-tray-host.sh (the main job without a display, and the tray's Xvfb test)
    "Xvfb": "tests/harness/xvfb-tray-host.sh, tests/presence/Xvfb.h",
    "xauth": "tests/presence/Xvfb.h",
    "xdotool": "tests/presence/Xvfb.h",
    "trayer": "tests/harness/xvfb-tray-host.sh",
    "mktemp": "tests/harness/xvfb-tray-host.sh",
    "seq": "tests/harness/xvfb-tray-host.sh",
    # the tests' and nicerd's own child processes
    "sh": "tests (std::system), nicerd's test workloads",
    "md5sum": "nicerd's demo workload (the main job)",
    "stress-ng": "integration tests, the README's foreground hog",
    # this check, a test itself
    "python3": "packaging/check-deps.py",
    "ninja": "packaging/check-deps.py, the build",
    "dpkg": "packaging/check-deps.py",
    # resources/man/manpage.sh (a build step: the manual pages)
    "help2man": "resources/man/manpage.sh",
    "gzip": "resources/man/manpage.sh, packaging/Deb.cmake",
    "ln": "resources/man/manpage.sh",
    "realpath": "resources/man/manpage.sh",
    "cp": "resources/man/manpage.sh",
    # packaging/dev.sh package and CI's install test, tests/packaging/install-deb.sh
    "dpkg-buildflags": "packaging/dev.sh package",
    "cpack": "packaging/dev.sh package",
    "dpkg-shlibdeps": "cpack (CPACK_DEBIAN_PACKAGE_SHLIBDEPS)",
    "file": "cpack (CPACK_DEBIAN_PACKAGE_SHLIBDEPS)",
    "dpkg-deb": "tests/packaging/install-deb.sh",
    "desktop-file-validate": "tests/packaging/install-deb.sh",
    "appstreamcli": "tests/packaging/install-deb.sh",
    "lintian": "tests/packaging/install-deb.sh",
    "tee": "tests/packaging/install-deb.sh",
    "sort": "tests/packaging/install-deb.sh",
    "diff": "tests/packaging/install-deb.sh",
    "cmp": "tests/packaging/install-deb.sh",
    "zcat": "tests/packaging/install-deb.sh",
    "readlink": "tests/packaging/install-deb.sh",
    "ls": "tests/packaging/install-deb.sh",
    "wc": "tests/packaging/install-deb.sh",
    "xwininfo": "tests/packaging/install-deb.sh",
    "pgrep": "tests/packaging/install-deb.sh",
    "import": "tests/packaging/install-deb.sh (ImageMagick's screenshot)",
    "busctl": "tests/packaging/install-deb.sh",
    # tests/tray: the single-instance test and the private buses of the unit tests
    "dbus-run-session": "tests/tray/CMakeLists.txt (single-instance.sh on a private bus)",
    "awk": "tests/tray/single-instance.sh",
    # tests/packaging/dev-run-stops.sh (CI: dev.sh run, then Ctrl-C)
    "ps": "tests/packaging/dev-run-stops.sh",
    "comm": "tests/packaging/dev-run-stops.sh",
    # packaging/flatpak/validate.sh (a test)
    "flatpak-builder": "packaging/flatpak/validate.sh",
}

# Shell builtins and keywords a build command may start with: not programs to look up.
SHELL_WORDS = {":", "cd", "true", "false", "test", "[", "echo", "printf", "exit", "set", "export", "exec"}

# Qt platform plugins the tray's tests load (tests/tray: QT_QPA_PLATFORM=offscreen; xvfb-tray-host.sh: xcb),
# relative to the directory of the Qt libraries on the link lines.
QT_PLUGINS = ["qt6/plugins/platforms/libqoffscreen.so", "qt6/plugins/platforms/libqxcb.so"]

# Where programs are looked up: a login shell's PATH on Debian, not the caller's (pyenv, ~/.local).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MERGED_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
FIX = "add {} to packages in packaging/dev.sh"

KIND_HEADER = "header (compiler depfile)"
KIND_CMAKE = "CMake file read by the configure step"
KIND_LIB = "library on a link line"
KIND_COMPILER = "compiler part or implicit library"
KIND_TOOL = "program a build command runs"
KIND_CACHE = "program CMake found (CMakeCache.txt)"
KIND_RUNTIME = "program the tests, the main job or the package job run"
KIND_PLUGIN = "Qt plugin the tray's tests load"


class UsageError(Exception):
    pass


def log(msg):
    print(f"check-deps: {msg}", file=sys.stderr)


def run(argv, **kw):
    """Runs argv with C messages; returns CompletedProcess (text)."""
    env = dict(os.environ, LC_ALL="C", LANGUAGE="")
    return subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, **kw)


def system_tool(name):
    path = shutil.which(name, path=SYSTEM_PATH)
    if not path:
        raise UsageError(f"{name} not found: this check runs on Debian (dpkg) with the build's tools installed")
    return path


# ---------------------------------------------------------------------------------------------------------
# The build's files


class Build:
    def __init__(self, build_dir):
        self.dir = os.path.abspath(build_dir)
        if not os.path.isfile(os.path.join(self.dir, "build.ninja")):
            raise UsageError(f"{self.dir} is not a Ninja build directory (no build.ninja)")
        self.cache = self._read_cache()
        generator = self.cache.get("CMAKE_GENERATOR", "")
        if generator != "Ninja":
            raise UsageError(f"{self.dir} was configured with the '{generator}' generator; this check needs 'Ninja'")
        self.source_dir = os.path.realpath(self.cache.get("CMAKE_HOME_DIRECTORY", self.dir))
        self.real_dir = os.path.realpath(self.dir)
        self.ninja = self.cache.get("CMAKE_MAKE_PROGRAM") or system_tool("ninja")
        self.compiler = self.cache.get("CMAKE_CXX_COMPILER", "")
        self.files = collections.defaultdict(set)  # absolute path -> kinds

    def _read_cache(self):
        path = os.path.join(self.dir, "CMakeCache.txt")
        if not os.path.isfile(path):
            raise UsageError(f"{self.dir} has no CMakeCache.txt: configure it with CMake first")
        cache = {}
        self.filepaths = []
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^([^#/][^:=]*):([A-Z]+)=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(3)
                    if m.group(2) == "FILEPATH":
                        self.filepaths.append(m.group(3))
        return cache

    def _ninja(self, *args):
        # -n (dry run): ninja then never opens its logs for writing, so it cannot recompact them under a build.
        r = run([self.ninja, "-n", "-C", self.dir, *args])
        if r.returncode != 0:
            raise UsageError(f"ninja {' '.join(args)} failed in {self.dir}: {r.stderr.strip() or r.stdout.strip()}")
        return r.stdout

    def add(self, path, kind):
        """Records a file the build used, unless it is in the source or the build tree."""
        if not path:
            return
        if not os.path.isabs(path):
            path = os.path.join(self.dir, path)
        path = os.path.normpath(path)
        real = os.path.realpath(path)
        for tree in (self.dir, self.real_dir, self.source_dir):
            if path == tree or path.startswith(tree + "/") or real.startswith(tree + "/"):
                return
        self.files[path].add(kind)

    def collect(self):
        targets = self._ninja("-t", "targets", "all")
        compiled = []
        for line in targets.splitlines():
            out, _, rule = line.rpartition(": ")
            if "_COMPILER__" in rule:
                compiled.append(out)
        if not compiled:
            raise UsageError(f"build.ninja in {self.dir} has no compile steps")
        self._collect_headers(compiled)
        self._collect_cmake_inputs()
        self._collect_commands()
        self._collect_compiler()
        self._collect_cache_programs()

    def _collect_headers(self, compiled):
        text = self._ninja("-t", "deps", *compiled)
        missing = []
        for line in text.splitlines():
            if line.startswith("    "):
                self.add(line.strip(), KIND_HEADER)
            elif line and not line.startswith(" "):
                m = re.match(r"^(.*): (#deps|deps not found)", line)
                if m and m.group(2) == "deps not found":
                    missing.append(m.group(1))
        if missing:
            raise UsageError(f"{self.dir} has not been built ({len(missing)} of {len(compiled)} objects have no "
                             f"dependency record, e.g. {missing[0]}): build it first (cmake --build)")

    def _statements(self):
        """build.ninja's statements, continuation lines ("$" at the end) joined."""
        with open(os.path.join(self.dir, "build.ninja"), encoding="utf-8", errors="replace") as f:
            text = f.read()
        return re.sub(r"\$\n[ \t]*", "", text).splitlines()

    def _collect_cmake_inputs(self):
        found = False
        for line in self._statements():
            m = re.match(r"^build (.*?): RERUN_CMAKE\b(.*)$", line)
            if not m:
                continue
            found = True
            for path in ninja_paths(m.group(2)):
                if path != "|":
                    self.add(path, KIND_CMAKE)
        if not found:
            raise UsageError(f"build.ninja in {self.dir} has no RERUN_CMAKE edge: not generated by CMake?")

    def _collect_commands(self):
        qt_lib_dirs = set()
        for command in self._ninja("-t", "commands").splitlines():
            for argv in command_segments(command):
                program = argv[0]
                if os.path.isabs(program):
                    self.add(program, KIND_TOOL)
                elif "/" not in program and program not in SHELL_WORDS and "=" not in program:
                    path = shutil.which(program, path=SYSTEM_PATH)
                    if path:
                        self.add(path, KIND_TOOL)
                    else:
                        log(f"warning: build.ninja runs {program}, which is not installed")
                if program == self.compiler and "-c" not in argv and "-o" in argv:
                    for lib in self._link_libraries(argv):
                        self.add(lib, KIND_LIB)
                        if os.path.basename(lib).startswith("libQt6Gui.so"):
                            qt_lib_dirs.add(os.path.dirname(lib))
                if argv[:3] == [program, "-E", "cmake_autogen"] or "cmake_autorcc" in argv:
                    self._collect_autogen(argv)
        for d in qt_lib_dirs:
            for plugin in QT_PLUGINS:
                if os.path.exists(os.path.join(d, plugin)):
                    self.add(os.path.join(d, plugin), KIND_PLUGIN)

    def _collect_autogen(self, argv):
        # moc, uic and rcc run inside `cmake -E cmake_autogen INFO.json`: their paths are in the info file.
        for arg in argv:
            if arg.endswith(".json") and os.path.isfile(arg):
                try:
                    with open(arg, encoding="utf-8") as f:
                        info = json.load(f)
                except (OSError, ValueError):
                    continue
                for key, value in info.items():
                    if key.endswith("_EXECUTABLE") and isinstance(value, str) and os.path.isabs(value):
                        self.add(value, KIND_TOOL)

    def _implicit(self, name):
        for path in glob.glob(os.path.join(self.dir, "CMakeFiles", "*", "CMakeCXXCompiler.cmake")):
            with open(path, encoding="utf-8", errors="replace") as f:
                m = re.search(r'set\(CMAKE_CXX_IMPLICIT_%s "([^"]*)"\)' % name, f.read())
            if m:
                return [x for x in m.group(1).split(";") if x]
        return []

    def _link_libraries(self, argv):
        search, wanted, libs = [], [], []
        static = False
        args = iter(argv[1:])
        for arg in args:
            if arg == "-o":
                next(args, None)
            elif arg.startswith("-L"):
                search.append(arg[2:] or next(args, ""))
            elif arg.startswith("-l"):
                wanted.append((arg[2:] or next(args, ""), static))
            elif arg.startswith("-Wl,"):
                for opt in arg[4:].split(","):
                    if opt in ("-Bstatic", "-static", "-dn", "-non_shared"):
                        static = True
                    elif opt in ("-Bdynamic", "-dy", "-call_shared"):
                        static = False
            elif os.path.isabs(arg) and re.search(r"\.(so(\.[0-9.]+)?|a|o)$", arg):
                libs.append(arg)
        search += self._implicit("LINK_DIRECTORIES")
        for name, is_static in wanted:
            path = resolve_library(name, search, is_static)
            if path:
                libs.append(path)
            else:
                log(f"warning: cannot resolve -l{name} in {':'.join(search)}")
        return libs

    def _collect_compiler(self):
        if not self.compiler or not os.path.isabs(self.compiler):
            return
        self.add(self.compiler, KIND_COMPILER)
        for prog in ("cc1plus", "collect2", "as", "ld"):
            r = run([self.compiler, f"-print-prog-name={prog}"])
            path = r.stdout.strip()
            if r.returncode == 0 and not os.path.isabs(path):
                path = shutil.which(path, path=SYSTEM_PATH) or ""
            if r.returncode == 0 and os.path.isfile(path):
                self.add(path, KIND_COMPILER)
        for obj in ("Scrt1.o", "crti.o", "crtn.o", "crtbeginS.o", "crtendS.o"):
            r = run([self.compiler, f"-print-file-name={obj}"])
            path = r.stdout.strip()
            if r.returncode == 0 and os.path.isabs(path) and os.path.isfile(path):
                self.add(path, KIND_COMPILER)
        dirs = self._implicit("LINK_DIRECTORIES")
        for name in dict.fromkeys(self._implicit("LINK_LIBRARIES")):
            path = resolve_library(name, dirs, False)
            if path:
                self.add(path, KIND_COMPILER)

    def _collect_cache_programs(self):
        for value in self.filepaths:
            if (os.path.isabs(value) and os.path.isfile(value) and os.access(value, os.X_OK)
                    and not re.search(r"\.(so(\.[0-9.]+)?|a)$", value)):
                self.add(value, KIND_CACHE)


def ninja_paths(text):
    """The paths of a build.ninja path list (spaces separate them; "$ ", "$:" and "$$" escape)."""
    paths, cur, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "$" and i + 1 < len(text):
            cur += text[i + 1]
            i += 2
            continue
        if c == " ":
            if cur:
                paths.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        paths.append(cur)
    return paths


def command_segments(command):
    """The argv of each simple command in a shell command line from build.ninja ("a && b", "cd x && c")."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return []
    segments, cur = [], []
    for tok in tokens:
        if tok in ("&&", "||", ";", "|"):
            if cur:
                segments.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        segments.append(cur)
    return segments


def resolve_library(name, dirs, static):
    """Where the linker finds -lNAME: the first directory with libNAME.so (unless static) or libNAME.a."""
    if name.startswith(":"):
        candidates = [name[1:]]
    else:
        candidates = ([] if static else [f"lib{name}.so"]) + [f"lib{name}.a"]
    for d in dirs:
        for c in candidates:
            path = os.path.join(d, c)
            if os.path.isfile(path):
                return os.path.normpath(path)
    return None


def runtime_programs():
    found, missing = {}, []
    for name, who in RUNTIME_PROGRAMS.items():
        path = shutil.which(name, path=SYSTEM_PATH)
        if path:
            found[path] = f"{KIND_RUNTIME}: {name}, by {who}"
        else:
            missing.append((name, who))
    return found, missing


# ---------------------------------------------------------------------------------------------------------
# Files to packages


def merged_twin(path):
    """The other spelling of a path on a merged-/usr system (/usr/bin/x <-> /bin/x), or None."""
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "usr" and parts[2] in MERGED_DIRS:
        return "/" + "/".join(parts[2:])
    if len(parts) > 1 and parts[1] in MERGED_DIRS:
        return "/usr" + path
    return None


def symlink_chain(path):
    """path, then each symlink target in turn (the last component's links), then its real path."""
    chain, cur = [path], path
    for _ in range(40):
        if not os.path.islink(cur):
            break
        cur = os.path.normpath(os.path.join(os.path.dirname(cur), os.readlink(cur)))
        if cur in chain:
            break
        chain.append(cur)
    real = os.path.realpath(path)
    if real not in chain:
        chain.append(real)
    return chain


def dpkg_owners(paths):
    """{path: set of packages} for the paths dpkg knows (dpkg -S, in batches)."""
    dpkg_query = system_tool("dpkg-query")
    owners = collections.defaultdict(set)
    paths = sorted(set(paths))
    batch, size = [], 0
    batches = []
    for p in paths:
        if size + len(p) > 60000:
            batches.append(batch)
            batch, size = [], 0
        batch.append(p)
        size += len(p) + 1
    if batch:
        batches.append(batch)
    for batch in batches:
        # An absolute path without glob characters is looked up exactly; escape the rare ones that have some.
        r = run([dpkg_query, "-S", *[re.sub(r"([*?\[\]\\])", r"\\\1", p) for p in batch]])
        if r.returncode not in (0, 1):
            raise UsageError(f"dpkg-query -S failed: {r.stderr.strip()}")
        for line in r.stdout.splitlines():
            if line.startswith(("diversion by ", "local diversion ")):
                continue
            pkgs, sep, path = line.partition(": ")
            if not sep:
                continue
            for pkg in pkgs.split(", "):
                owners[path].add(pkg.split(":")[0].strip())
    return owners


class FileOwners:
    """For each file: the list of links of its chain that packages own, each with its owners."""

    def __init__(self, files):
        self.chains = {f: symlink_chain(f) for f in files}
        queries = set()
        for chain in self.chains.values():
            for p in chain:
                queries.add(p)
                twin = merged_twin(p)
                if twin:
                    queries.add(twin)
        self.owners = dpkg_owners(queries)

    def owners_of(self, path):
        owners = set(self.owners.get(path, ()))
        twin = merged_twin(path)
        if twin:
            owners |= self.owners.get(twin, set())
        return owners

    def needs(self, f):
        """([owner sets, one per owned link of f's chain], unowned regular file or None)."""
        needed, unowned = [], None
        for p in self.chains[f]:
            if p.startswith("/etc/alternatives/"):
                continue
            owners = self.owners_of(p)
            if owners:
                needed.append(owners)
            elif os.path.exists(p) and not os.path.islink(p):
                unowned = p
        return needed, unowned


# ---------------------------------------------------------------------------------------------------------
# Packages dev.sh installs


def first_name(alt):
    """The package name of one alternative of a relation ("libfoo:any (>= 1.2)" -> "libfoo")."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9+.-]*)", alt)
    return m.group(1) if m else None


def relations(field):
    """A Depends-style field as a list of alternative lists of names."""
    groups = []
    for clause in field.split(","):
        alts = [first_name(a) for a in clause.split("|")]
        alts = [a for a in alts if a]
        if alts:
            groups.append(alts)
    return groups


class Installed:
    def __init__(self):
        dpkg_query = system_tool("dpkg-query")
        fmt = "${Package}\\t${db:Status-Status}\\t${Essential}\\t${Priority}\\t${Provides}\\t${Pre-Depends}\\t${Depends}\\n"
        r = run([dpkg_query, "-W", "-f", fmt])
        if r.returncode != 0:
            raise UsageError(f"dpkg-query -W failed: {r.stderr.strip()}")
        self.depends = collections.defaultdict(list)
        self.providers = collections.defaultdict(set)
        self.base = set()
        for line in r.stdout.splitlines():
            fields = line.split("\t")
            if len(fields) != 7 or fields[1] != "installed":
                continue
            name, _, essential, priority, provides, predepends, depends = fields
            self.depends[name] += relations(predepends) + relations(depends)
            for group in relations(provides):
                self.providers[group[0]].add(name)
            if essential == "yes" or priority == "required":
                self.base.add(name)

    def resolve(self, name):
        """The installed packages that satisfy NAME: itself, else its installed providers."""
        if name in self.depends:
            return {name}
        return set(self.providers.get(name, ()))

    def closure(self, roots, parents=None):
        """roots and all they depend on (Depends, Pre-Depends); parents, if given, gets who pulled in whom."""
        seen, todo = set(), collections.deque((r, None) for r in sorted(roots))
        while todo:
            pkg, parent = todo.popleft()
            if pkg in seen:
                continue
            seen.add(pkg)
            if parents is not None:
                parents[pkg] = parent
            for group in self.depends.get(pkg, ()):
                for alt in group:  # the first alternative installed, as apt would pick the first
                    pkgs = self.resolve(alt)
                    if pkgs:
                        todo.extend((p, pkg) for p in sorted(pkgs))
                        break
        return seen


def dev_sh_packages(dev_sh):
    """dev.sh's package list: `dev.sh packages`, else its packages=(...) array."""
    try:
        r = run([dev_sh, "packages"], timeout=60)
        names = r.stdout.split()
        if r.returncode == 0 and names and all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+(:[a-z0-9]+)?", n) for n in names):
            return [n.split(":")[0] for n in names]
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        with open(dev_sh, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {dev_sh}: {e}")
    m = re.search(r"^\s*packages=\((.*?)\)", text, re.S | re.M)
    if not m:
        raise UsageError(f"{dev_sh} has neither a 'packages' subcommand nor a packages=(...) list")
    log(f"note: {dev_sh} has no 'packages' subcommand: read its packages=(...) list")
    body = re.sub(r"#[^\n]*", "", m.group(1))
    return body.split()


# ---------------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(
        prog="check-deps.py",
        description="Fail unless packaging/dev.sh installs every Debian package the build, the tests and the "
        "main job use.")
    ap.add_argument("build_dir", help="a finished Ninja build of nicer")
    ap.add_argument("--without", action="append", default=[], metavar="PKG",
                    help="take PKG out of dev.sh's list first (repeatable)")
    ap.add_argument("--dev-sh", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "dev.sh"),
                    help="the dev.sh whose list to check (default: the one beside this script)")
    ap.add_argument("--verbose", action="store_true", help="list every package with the files that need it")
    args = ap.parse_args()

    build = Build(args.build_dir)
    build.collect()
    programs, missing_programs = runtime_programs()
    for path, kind in programs.items():
        build.add(path, kind)

    listed = dev_sh_packages(args.dev_sh)
    for pkg in args.without:
        if pkg in listed:
            listed = [p for p in listed if p != pkg]
        else:
            log(f"note: --without {pkg}: {pkg} is not in dev.sh's list")
    installed = Installed()
    roots = set()
    for pkg in listed:
        pkgs = installed.resolve(pkg)
        if not pkgs:
            log(f"warning: dev.sh lists {pkg}, which is not installed here: run packaging/dev.sh build first")
        roots |= pkgs
    parents = {}
    from_dev_sh = installed.closure(roots, parents)
    allowed = from_dev_sh | installed.closure(installed.base)

    owners = FileOwners(build.files)
    by_package = collections.defaultdict(list)  # package -> files that need it (any of a file's owners)
    uncovered = collections.defaultdict(list)  # package -> files that need it and are not covered
    unowned = []
    for f in sorted(build.files):
        needed, stray = owners.needs(f)
        if stray:
            unowned.append((f, stray))
        for pkg in set().union(*needed):
            by_package[pkg].append(f)
        for pkg in {min(pkgs) for pkgs in needed if not pkgs & allowed}:
            uncovered[pkg].append(f)

    def kinds(f):
        return "; ".join(sorted(build.files[f]))

    if args.verbose:
        for pkg in sorted(by_package):
            if pkg in parents:
                chain, cur = [], pkg
                while cur:
                    chain.append(cur)
                    cur = parents[cur]
                state = "listed in dev.sh" if len(chain) == 1 else "dev.sh: " + " <- ".join(chain[1:])
            else:
                state = "minimal Debian" if pkg in allowed else "NOT COVERED"
            print(f"{pkg} ({state}): {len(by_package[pkg])} files, e.g. {by_package[pkg][0]}")

    failed = False
    if uncovered:
        failed = True
        # The fewest packages to add: a package pulled in by another one to add is named under it.
        wanted = set(uncovered)
        pulls = {p: installed.closure({p}) & wanted for p in wanted}
        order = sorted(wanted, key=lambda p: (-len(pulls[p]), p))
        fixes, done = [], set()
        for pkg in order:
            if pkg not in done:
                fixes.append(pkg)
                done |= pulls[pkg]
        fixes.sort()
        print(f"check-deps: FAIL: the build, the tests or the main job use {len(wanted)} package(s) that "
              f"packaging/dev.sh does not install (with Depends, without Recommends):")
        for fix in fixes:
            brings = sorted(pulls[fix] - {fix})
            print(f"  {fix}: {len(uncovered[fix])} file(s), e.g.")
            for f in uncovered[fix][:2]:
                print(f"      {f} ({kinds(f)})")
            for other in brings:
                print(f"    it also brings {other}: {len(uncovered[other])} file(s), e.g. {uncovered[other][0]} "
                      f"({kinds(uncovered[other][0])})")
            print(f"    fix: {FIX.format(fix)}")
    if unowned:
        failed = True
        print(f"check-deps: FAIL: {len(unowned)} file(s) the build or the tests use belong to no Debian package "
              f"(a fresh machine does not have them):")
        for f, stray in unowned[:10]:
            print(f"  {f}{'' if f == stray else ' -> ' + stray} ({kinds(f)})")
        if len(unowned) > 10:
            print(f"  ... and {len(unowned) - 10} more")
        print("    fix: install them from a Debian package and add it to packages in packaging/dev.sh, "
              "or remove them (e.g. from /usr/local)")
    if missing_programs:
        failed = True
        print("check-deps: FAIL: programs the tests or the main job run are not installed here:")
        for name, who in missing_programs:
            print(f"  {name} (run by {who})")
        print("    fix: install the package that has it (apt-file search) and add it to packages in "
              "packaging/dev.sh")
    if failed:
        return 1
    print(f"check-deps: OK: {len(build.files)} files from {len(by_package)} packages, all installed by "
          f"packaging/dev.sh ({len(listed)} listed, {len(from_dev_sh)} with Depends) or in a minimal Debian "
          f"({len(installed.base)} Essential/required packages)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        log(str(e))
        sys.exit(2)
