#!/usr/bin/env python3
"""The unit and CLI tests of a build (ctest's labels unit and cli), each Catch2 executable run once with all
the cases ctest lists for it, where ctest starts one process per case.

Under the sanitizers a process's start costs about 0.2 s, and the ~780 cases' starts took half of the stage's
time. The cases are ctest's own (read from `ctest --show-only=json-v1`): each executable runs every case
ctest lists for it, in its working directory, and its run must report that many cases, so that none is lost.
JOBS executables run at once. A failing executable's whole output is printed. A case that skipped
(tests/Skip.h's marker) is named with its reason, as ctest would show it skipped. The few tests that are
not Catch2 cases run through ctest itself.

Usage: tests/sanitizers/run-unit-and-cli.py BUILD_DIR [JOBS]
"""

import collections
import concurrent.futures
import json
import re
import subprocess
import sys
import tempfile
import time

SKIP_MARKER = "NICER-TEST-SKIPPED "
CATCH_ARGS = ["--warn", "NoTests"]  # what catch_discover_tests passes after the case's name
LABELS = "unit|cli"
# The longest an executable may run before it counts as hung (ctest's default per test).
TIMEOUT_SECONDS = 1500


def ctest_tests(build):
    listing = subprocess.run(["ctest", "--test-dir", build, "-N", "-L", LABELS, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    return json.loads(listing)["tests"]


def prop(test, name):
    for p in test.get("properties", []):
        if p["name"] == name:
            return p["value"]
    return None


def split(tests, build):
    """Catch2 executables (path, working directory) -> their cases (as ctest names them to Catch2); the other
    tests."""
    executables = collections.defaultdict(list)
    others = []
    for t in tests:
        command = t.get("command", [])
        if len(command) == 2 + len(CATCH_ARGS) and command[2:] == CATCH_ARGS and prop(t, "SKIP_REGULAR_EXPRESSION"):
            executables[(command[0], prop(t, "WORKING_DIRECTORY") or build)].append(command[1])
        else:
            others.append(t)
    return executables, others


def run_whole(executable, directory, cases):
    """Runs @p cases of @p executable in one process (Catch2's --input-file: one case a line)."""
    expected = len(cases)
    start = time.monotonic()
    with tempfile.NamedTemporaryFile("w", suffix=".cases") as listing:
        listing.write("".join(case + "\n" for case in cases))
        listing.flush()
        try:
            done = subprocess.run([executable, "--input-file", listing.name] + CATCH_ARGS, cwd=directory,
                                  capture_output=True, text=True, errors="replace", timeout=TIMEOUT_SECONDS)
            output, status = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as e:
            output = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            output += f"\n{executable}: still running after {TIMEOUT_SECONDS} s: counted as hung\n"
            status = -1
    seconds = time.monotonic() - start
    # Catch2 v2's summary: "All tests passed (A assertions in N test cases)" or "test cases: N | ...".
    counted = re.search(r"in (\d+) test cases?\)|test cases: +(\d+)", output)
    ran = int(next(g for g in counted.groups() if g)) if counted else None
    problems = []
    if status != 0:
        problems.append(f"exit status {status}")
    if ran != expected:
        problems.append(f"ran {ran} cases where ctest lists {expected}")
    skipped = [line[len(SKIP_MARKER):] for line in output.splitlines() if line.startswith(SKIP_MARKER)]
    return executable, seconds, expected, problems, skipped, output


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    build = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) == 3 else 1
    executables, others = split(ctest_tests(build), build)
    if not executables:
        sys.exit(f"run-unit-and-cli: ctest lists no unit or CLI test in {build}: build nicer_unit_and_cli_tests")
    failed = 0
    skipped_total = 0
    # The longest first, by their number of cases, so that the last to end is a short one.
    order = sorted(executables.items(), key=lambda item: -len(item[1]))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = [pool.submit(run_whole, path, directory, cases) for (path, directory), cases in order]
        for future in concurrent.futures.as_completed(runs):
            executable, seconds, expected, problems, skipped, output = future.result()
            name = executable.rsplit("/", 1)[-1]
            verdict = "FAILED: " + "; ".join(problems) if problems else "passed"
            print(f"{name}: {expected} cases, {verdict} ({seconds:.0f} s)", flush=True)
            for reason in skipped:
                print(f"  skipped: {reason}", flush=True)
            skipped_total += len(skipped)
            if problems:
                failed += 1
                print(output, flush=True)
    for test in others:
        # As ctest runs it: its command in its directory, skipped on its marker.
        done = subprocess.run(test["command"], cwd=prop(test, "WORKING_DIRECTORY") or build,
                              capture_output=True, text=True, errors="replace", timeout=TIMEOUT_SECONDS)
        output = done.stdout + done.stderr
        skip = prop(test, "SKIP_REGULAR_EXPRESSION")
        if skip and any(re.search(pattern, output) for pattern in skip):
            print(f"{test['name']}: skipped", flush=True)
            skipped_total += 1
        elif done.returncode != 0:
            print(f"{test['name']}: FAILED: exit status {done.returncode}\n{output}", flush=True)
            failed += 1
        else:
            print(f"{test['name']}: passed", flush=True)
    cases = sum(len(c) for c in executables.values())
    print(f"run-unit-and-cli: {cases} cases in {len(executables)} executables, {skipped_total} skipped, "
          f"{len(others)} other tests; {failed} failed", flush=True)
    sys.exit(1 if failed else 0)
