#!/usr/bin/env python3
"""The anonymous-platform app of the nicertest project: a BOINC app without the BOINC API library.

The client starts it in the task's slot directory (client/app_start.cpp): the input file is there as a
plain file "in" and the output must be left as "out" (both <copy_file/> in the job). It then:

- computes: hashes the input over and over (SHA-256, in 1 MiB steps) until it has used --seconds of
  *CPU* time, so a CPU quota or a lower share stretches its wall time visibly;
- reports progress once a second the way api/boinc_api.cpp update_app_progress() does: an XML message
  (<current_cpu_time>, <checkpoint_cpu_time>, <fraction_done>) in the app_status channel of the shared
  memory the client maps from "boinc_mmap_file" (lib/app_ipc.h SHARED_MEM: eight 1024-byte MSG_CHANNELs;
  buf[0] != 0 means "message present", the text starts at buf[1]; lib/app_ipc.cpp MSG_CHANNEL);
- obeys <suspend/>, <resume/>, <quit/> and <abort/> from the process_control_request channel
  (client/app_control.cpp ACTIVE_TASK::suspend etc.), and exits when the client is gone (its parent
  process changes; api/boinc_api.cpp client_dead() checks the client's PID). The <heartbeat/> messages
  are consumed but not timed: a frozen cgroup must not look like a dead client after the thaw;
- checkpoints the CPU time done to "nicertest_checkpoint" every 10 s, so a restarted task resumes;
- at the end writes "out", a final status message with fraction_done 1, and the file
  "boinc_finish_called" containing "0" (api/boinc_api.cpp boinc_finish_message()): without that file the
  client takes a zero exit for a crash and restarts the task (client/app_control.cpp handle_exited_app).

Command line (from the job, then the app version's <cmdline> in app_info.xml):
    --seconds S          CPU seconds to compute (the job's value wins)
    --default-seconds S  used when there is no --seconds
    --output-bytes N     size of "out" (default 1024)
    --exit-status N      fail at the end with this status (no finish file) instead of succeeding
"""

import argparse
import hashlib
import mmap
import os
import sys
import time

SHMEM_FILE = "boinc_mmap_file"          # lib/shmem.h MMAPPED_FILE_NAME
FINISH_FILE = "boinc_finish_called"     # lib/app_ipc.h BOINC_FINISH_CALLED_FILE
CHECKPOINT_FILE = "nicertest_checkpoint"
CHANNEL_SIZE = 1024                     # lib/app_ipc.h MSG_CHANNEL_SIZE
# Channel offsets in SHARED_MEM (lib/app_ipc.h, in declaration order).
PROCESS_CONTROL_REQUEST = 0 * CHANNEL_SIZE
HEARTBEAT = 4 * CHANNEL_SIZE
APP_STATUS = 5 * CHANNEL_SIZE
SHMEM_SIZE = 8 * CHANNEL_SIZE
EXIT_ABORTED_BY_CLIENT = 194            # lib/error_numbers.h
CHECKPOINT_PERIOD = 10.0


def log(msg):
    """stderr goes to the slot's stderr.txt, which the client sends to the server as <stderr_out>."""
    sys.stderr.write("%s nicertest_app: %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


class SharedMemory:
    """The client's side of the conversation, through boinc_mmap_file (may be absent: standalone run)."""

    def __init__(self, path):
        self.mem = None
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            log("no %s: running standalone" % path)
            return
        try:
            if os.fstat(fd).st_size >= SHMEM_SIZE:
                self.mem = mmap.mmap(fd, SHMEM_SIZE)
            else:
                log("%s is too small: running standalone" % path)
        finally:
            os.close(fd)

    def get_msg(self, channel):
        """MSG_CHANNEL::get_msg: the message if the flag is set, and clear the flag."""
        if self.mem is None or self.mem[channel] == 0:
            return None
        raw = self.mem[channel + 1:channel + CHANNEL_SIZE]
        self.mem[channel] = 0
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def send_msg(self, channel, text, overwrite=False):
        """MSG_CHANNEL::send_msg (or send_msg_overwrite): text first, then the flag."""
        if self.mem is None or (self.mem[channel] != 0 and not overwrite):
            return False
        data = text.encode()[:CHANNEL_SIZE - 2] + b"\0"
        self.mem[channel + 1:channel + 1 + len(data)] = data
        self.mem[channel] = 1
        return True


def status_message(cpu, checkpoint_cpu, fraction):
    return ("<current_cpu_time>%e</current_cpu_time>\n"
            "<checkpoint_cpu_time>%e</checkpoint_cpu_time>\n"
            "<fraction_done>%e</fraction_done>\n" % (cpu, checkpoint_cpu, fraction))


def read_checkpoint():
    try:
        with open(CHECKPOINT_FILE) as f:
            return max(0.0, float(f.read().strip() or 0))
    except (OSError, ValueError):
        return 0.0


def write_checkpoint(cpu_done):
    with open(CHECKPOINT_FILE + ".tmp", "w") as f:
        f.write("%f\n" % cpu_done)
    os.replace(CHECKPOINT_FILE + ".tmp", CHECKPOINT_FILE)


def main(argv):
    p = argparse.ArgumentParser(prog="nicertest_app")
    p.add_argument("--seconds", type=float)
    p.add_argument("--default-seconds", type=float, default=10.0)
    p.add_argument("--output-bytes", type=int, default=1024)
    p.add_argument("--exit-status", type=int, default=0)
    p.add_argument("--input", default="in")
    p.add_argument("--output", default="out")
    args, unknown = p.parse_known_args(argv)
    if unknown:
        log("ignoring arguments %s" % unknown)
    seconds = args.seconds if args.seconds is not None else args.default_seconds

    shm = SharedMemory(SHMEM_FILE)
    parent = os.getppid()
    done_before = read_checkpoint()      # CPU seconds done in earlier runs of this task
    checkpoint_cpu = done_before
    log("start: %.1f of %.1f CPU seconds done, pid %d" % (done_before, seconds, os.getpid()))

    digest = hashlib.sha256()
    passes = 0
    cpu_start = time.process_time()
    last_status = last_checkpoint = time.monotonic()
    suspended = False
    with open(args.input, "rb") as f:
        while True:
            cpu = done_before + time.process_time() - cpu_start
            if cpu >= seconds:
                break

            # Messages from the client, and whether it is still there.
            msg = shm.get_msg(PROCESS_CONTROL_REQUEST) or ""
            if "<quit/>" in msg:
                log("quit requested at %.1f CPU seconds" % cpu)
                return 0                 # no finish file: the client restarts the task later
            if "<abort/>" in msg:
                log("abort requested")
                return EXIT_ABORTED_BY_CLIENT
            if "<suspend/>" in msg:
                suspended = True
                log("suspended")
            if "<resume/>" in msg:
                suspended = False
                log("resumed")
            shm.get_msg(HEARTBEAT)
            if os.getppid() != parent:
                log("client is gone; exiting")
                return 0

            if suspended:
                time.sleep(0.1)          # like the API: no status messages while suspended
                continue

            # Compute for about 50 ms of CPU, then look at the channels again.
            slice_end = time.process_time() + 0.05
            while time.process_time() < slice_end:
                chunk = f.read(1 << 20)
                if not chunk:
                    f.seek(0)
                    passes += 1
                    chunk = f.read(1 << 20)
                    if not chunk:        # empty input: hash something anyway
                        chunk = b"\0" * 65536
                digest.update(chunk)

            now = time.monotonic()
            cpu = done_before + time.process_time() - cpu_start
            if now - last_checkpoint >= CHECKPOINT_PERIOD:
                write_checkpoint(cpu)
                checkpoint_cpu = cpu
                last_checkpoint = now
            if now - last_status >= 1.0:
                fraction = min(cpu / seconds, 0.999999) if seconds > 0 else 0.999999
                shm.send_msg(APP_STATUS, status_message(cpu, checkpoint_cpu, fraction))
                last_status = now

    cpu = done_before + time.process_time() - cpu_start
    with open(args.output, "wb") as out:
        line = ("nicertest_app sha256 %s passes %d cpu %.3f\n" % (digest.hexdigest(), passes, cpu)).encode()
        data = (line * (args.output_bytes // len(line) + 1))[:args.output_bytes]
        out.write(data)
    shm.send_msg(APP_STATUS, status_message(cpu, cpu, 1.0), overwrite=True)
    if args.exit_status:
        log("failing on purpose with exit status %d after %.1f CPU seconds" % (args.exit_status, cpu))
        return args.exit_status
    with open(FINISH_FILE, "w") as f:
        f.write("0\n")
    log("finished: %.1f CPU seconds, %d passes over the input" % (cpu, passes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
