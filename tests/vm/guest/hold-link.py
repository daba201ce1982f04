#!/usr/bin/env python3
"""Runs in the guest as an attacker would: a program of the user's own, outside their user manager, that
connects to the user's work-host socket itself, has the host start a long `sleep` in the idle slice and then
holds the link, so that nothing of nicerd's closes it. Prints the host's answers; holds until killed.

Usage: hold-link.py UID
"""
import socket
import sys
import time


def main():
    uid = int(sys.argv[1])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(f"/run/nicer/work/{uid}.socket")
    s.settimeout(60)
    print("host:", s.recv(4096).decode().replace("\0", " | "), flush=True)
    fields = ["start", "held-1.service", "19", "/bin/sleep", "/", "2", "sleep", "1000"]
    s.send("\0".join(fields).encode())
    print("host:", s.recv(4096).decode().replace("\0", " | "), flush=True)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main()
