"""What every part of bench/net uses: its log on stderr, the way it gives up, and subprocesses (lists of
arguments, never a shell)."""

import subprocess
import sys
import time


def log(message):
    print(f"bench-net: {message}", file=sys.stderr, flush=True)


def die(message):
    """Logs @p message and exits with 1; the cleanup of run.py (a finally) still runs."""
    log(message)
    sys.exit(1)


def run(args, check=True, timeout=60, **kwargs):
    """Runs @p args, returns its stdout; dies naming the command and its stderr when it fails and @p check is
    set."""
    done = subprocess.run([str(a) for a in args], text=True, capture_output=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        die(f"{' '.join(map(str, args))} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def succeeds(args, timeout=10, output=subprocess.DEVNULL):
    """Whether @p args exits with 0 within @p timeout seconds; its stdout and stderr go to @p output."""
    try:
        return subprocess.run([str(a) for a in args], stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                              timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def stop(process, grace=5.0):
    """Ends @p process (a Popen) if it still runs: SIGTERM, SIGKILL after @p grace seconds; reaps it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def wait_until(limit, what, condition, logs):
    """Polls @p condition every half second; dies naming @p what when it is still false after @p limit
    seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() >= deadline:
            die(f"(d) {what} did not happen within {limit}s; see {logs}")
        time.sleep(0.5)
