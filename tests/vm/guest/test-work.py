#!/usr/bin/env python3
"""Runs in the guest as the volunteer work of a check (nicerd.conf's workload), until it is stopped.

Usage: test-work.py memory MIB [EVERY]
                                  holds MIB MiB of memory, every page touched; with EVERY (seconds), touched
                                  again that often, as a task that works on its data keeps it in use
       test-work.py threads       makes threads until the kernel refuses one (the unit's TasksMax), and holds them
"""
import sys
import threading
import time


def main():
    if sys.argv[1:2] == ["memory"]:
        held = bytearray(b"w") * (int(sys.argv[2]) << 20)
        print(f"holding {len(held) >> 20} MiB", flush=True)
        if len(sys.argv) > 3:
            every, pages, value = float(sys.argv[3]), len(held[::4096]), 0
            while True:
                value = (value + 1) % 256
                held[::4096] = bytes([value]) * pages  # one byte of each page, in C
                time.sleep(every)
    elif sys.argv[1:] == ["threads"]:
        threading.stack_size(65536)
        count = 0
        try:
            while True:
                threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
                count += 1
        except RuntimeError as refused:
            print(f"{count} threads, then: {refused}", flush=True)
    else:
        raise SystemExit(__doc__)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
