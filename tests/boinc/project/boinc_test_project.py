#!/usr/bin/env python3
"""A local BOINC project for tests and benchmarks: the real BOINC client runs its whole path against it.

One project, "nicertest", served over plain HTTP (loopback by default), with Python's standard library only:

    GET  /nicertest/                        master page: names the scheduler (client/scheduler_op.cpp,
                                            SCHEDULER_OP::parse_master_file)
    POST /nicertest_cgi/cgi                 scheduler: reads the <scheduler_request> written by
                                            client/cs_scheduler.cpp (make_scheduler_request), answers with a
                                            <scheduler_reply> as parsed by client/scheduler_op.cpp
                                            (SCHEDULER_REPLY::parse) and used by client/cs_scheduler.cpp
                                            (handle_scheduler_reply)
    GET  /nicertest/download/<file>         input files, generated on the fly and streamed in chunks, with
                                            Range support (client/http_curl.cpp sends "Range: bytes=N-" to
                                            resume a download)
    POST /nicertest_cgi/file_upload_handler output files: the <data_server_request> protocol of
                                            sched/file_upload_handler.cpp, as spoken by client/file_xfer.cpp
    GET  /nicertest/state.json              what the state file holds

The jobs are for an anonymous-platform app (nicertest_app.py, next to this file): the client only uses the
app if an app_info.xml is in the project's directory *before* it attaches (client/cs_account.cpp,
CLIENT_STATE::add_project). `prepare-client` puts it there.

Usage:
    boinc_test_project.py [serve] [--host H] [--port P] [--dir WORKDIR] [--workunits N]
                          [--input-bytes N] [--task-seconds S] [--state-file F] [--url-file F] ...
    boinc_test_project.py prepare-client --boinc-dir D --url URL [--task-seconds S] [--client-config]

`serve` prints the master URL as the first line on stdout (and writes it to --url-file), then logs to
stderr until SIGTERM/SIGINT. Everything it saw is recorded in the JSON state file (see ProjectState).
"""

import argparse
import hashlib
import html
import json
import logging
import math
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = logging.getLogger("nicertest")

PROJECT_DIR_NAME = "nicertest"          # the master URL is http://HOST:PORT/nicertest/
CGI_DIR_NAME = "nicertest_cgi"
APP_NAME = "nicertest_app"
APP_VERSION_NUM = 100
APP_FILE_NAME = "nicertest_app_1.00"    # the app's file name in the client's project directory
APP_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nicertest_app.py")
APP_FLOPS = 1e9                         # declared in app_info.xml, so rsc_fpops_est / APP_FLOPS = seconds
INPUT_OPEN_NAME = "in"                  # names the app sees in its slot directory (copy_file)
OUTPUT_OPEN_NAME = "out"

CHUNK = 1 << 20                         # 1 MiB: the generator's block and the streaming chunk

# RESULT states as reported in <result><state> (lib/common_defs.h).
RESULT_STATE_NAMES = {
    0: "new", 1: "files_downloading", 2: "files_downloaded", 3: "compute_error",
    4: "files_uploading", 5: "files_uploaded", 6: "aborted", 7: "upload_failed",
}


# --------------------------------------------------------------------------------------------------
# Small helpers


def xml_escape(text):
    return html.escape(str(text), quote=False)


def tag_text(xml, name, default=None):
    """First <name>...</name> in xml, stripped; default if absent.

    The BOINC server parses requests tag by tag (lib/parse.cpp), not as strict XML; this does the same,
    so odd characters in host info or stderr_out can't make a request unreadable."""
    m = re.search(r"<%s>(.*?)</%s>" % (name, name), xml, re.S)
    return m.group(1).strip() if m else default


def tag_number(xml, name, default=0.0):
    text = tag_text(xml, name)
    try:
        return float(text) if text is not None else default
    except ValueError:
        return default


def tag_blocks(xml, name):
    """The contents of every <name>...</name> (not nested)."""
    return re.findall(r"<%s>(.*?)</%s>" % (name, name), xml, re.S)


def canonical_master_url(url):
    """lib/url.cpp canonicalize_master_url(): http(s)://, no double slashes, trailing slash."""
    scheme = "https" if url.startswith("https://") else "http"
    rest = url.split("://", 1)[1] if "://" in url else url
    while "//" in rest:
        rest = rest.replace("//", "/")
    if not rest.endswith("/"):
        rest += "/"
    return "%s://%s" % (scheme, rest)


def project_dir_name(master_url):
    """The client's directory for a project: lib/url.cpp escape_project_url() of the canonical URL.

    Drop the scheme, turn every character other than [A-Za-z0-9._-] into '_', drop one trailing '_'.
    http://127.0.0.1:34567/nicertest/ -> 127.0.0.1_34567_nicertest"""
    url = canonical_master_url(master_url)
    rest = url.split("://", 1)[1]
    out = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in rest)
    return out[:-1] if out.endswith("_") else out


def valid_master_url(url):
    """lib/url.cpp valid_master_url(): the client refuses to attach to a URL without a '.' after the
    scheme followed later by a '/' (so http://localhost:1234/x/ is refused; use 127.0.0.1)."""
    m = re.match(r"https?://(.*)$", url)
    if not m or not url.endswith("/"):
        return False
    rest = m.group(1)
    dot = rest.find(".")
    if dot <= 0:
        return False
    slash = rest.find("/", dot + 1)
    return slash > dot + 1


# --------------------------------------------------------------------------------------------------
# Input files: deterministic content generated on the fly


class InputContent:
    """The bytes of every input file: a 1 MiB block (zeros, or pseudorandom from a fixed seed) repeated
    and cut at `size`. All input files of a run have the same content, so the MD5 that goes into the
    <file_info> is computed once."""

    def __init__(self, size, kind):
        self.size = size
        self.kind = kind
        if kind == "zeros":
            self.block = bytes(CHUNK)
        else:
            self.block = random.Random(0x6E69636572).randbytes(CHUNK)
        started = time.monotonic()
        md5 = hashlib.md5()
        for chunk in self.chunks(0):
            md5.update(chunk)
        self.md5 = md5.hexdigest()
        LOG.info("input files: %d bytes of %s, md5 %s (%.2f s)", size, kind, self.md5,
                 time.monotonic() - started)

    def chunks(self, offset, chunk_size=CHUNK):
        """Yield the content from offset to the end, in chunks of at most chunk_size bytes."""
        pos = offset
        while pos < self.size:
            start = pos % CHUNK
            n = min(chunk_size, CHUNK - start, self.size - pos)
            yield self.block[start:start + n]
            pos += n


# --------------------------------------------------------------------------------------------------
# What the project knows and what it saw


class ProjectState:
    """The work units, results and everything the client did, saved as JSON after each change.

    State file layout:
      url, started, pid, options
      master_fetches: [{time}]
      scheduler_requests: [{time, hostid, rpc_seqno, client_version, platform, work_req_seconds,
                            cpu_req_secs, cpu_req_instances, dont_send_work, reported, other_results,
                            sent, acked}]
      downloads: [{time, file, offset, bytes, complete}]
      uploads: {file: {time, nbytes, bytes_received, md5, md5_expected, size_ok, md5_ok, complete, status}}
      results: {name: {wu, input_file, output_file, status ("unsent", "sent", "reported"), sent_time,
                       reported_time, exit_status, state, state_name, outcome ("success"/"error"),
                       final_cpu_time, final_elapsed_time, stderr_out, output_uploaded}}
    """

    MAX_REQUESTS_KEPT = 200

    def __init__(self, path, url, options, content, workunits):
        self.path = path
        self.lock = threading.Lock()
        self.next_hostid = 1
        self.content = content
        self.data = {
            "url": url,
            "started": time.time(),
            "pid": os.getpid(),
            "options": options,
            "master_fetches": [],
            "scheduler_requests": [],
            "downloads": [],
            "uploads": {},
            "results": {},
        }
        for k in range(1, workunits + 1):
            wu = "nicertest_wu_%d" % k
            name = wu + "_0"
            self.data["results"][name] = {
                "wu": wu,
                "input_file": "nicertest_in_%d" % k,
                "output_file": name + "_out",
                "status": "unsent",
            }
        self.input_files = {r["input_file"] for r in self.data["results"].values()}
        self.save()

    def save(self):
        """Write the state atomically (temp file + rename), so readers never see half a file."""
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.path)


# --------------------------------------------------------------------------------------------------
# The scheduler


class Scheduler:
    """Answers scheduler RPCs (client/cs_scheduler.cpp make_scheduler_request -> SCHEDULER_REPLY::parse).

    Policy: every unsent result goes out in the first reply to a request that asks for work
    (work_req_seconds, cpu_req_secs or cpu_req_instances > 0) and is not <dont_send_work>, or to any
    request with --send-always. Reported results are acknowledged with <result_ack>, so the client
    forgets them."""

    def __init__(self, opts, state, urls):
        self.opts = opts
        self.state = state
        self.urls = urls
        self.credit = 0.0

    def handle(self, request):
        now = time.time()
        record = {
            "time": now,
            "hostid": int(tag_number(request, "hostid")),
            "rpc_seqno": int(tag_number(request, "rpc_seqno")),
            "client_version": "%d.%d.%d" % (
                tag_number(request, "core_client_major_version"),
                tag_number(request, "core_client_minor_version"),
                tag_number(request, "core_client_release")),
            "platform": tag_text(request, "platform_name"),
            "authenticator_ok": tag_text(request, "authenticator") == self.opts.authenticator,
            "work_req_seconds": tag_number(request, "work_req_seconds"),
            "cpu_req_secs": tag_number(request, "cpu_req_secs"),
            "cpu_req_instances": tag_number(request, "cpu_req_instances"),
            "dont_send_work": tag_number(request, "dont_send_work") != 0,
            "reported": [],
            "other_results": [tag_text(b, "name") for b in tag_blocks(request, "other_result")],
            "sent": [],
            "acked": [],
        }
        with self.state.lock:
            data = self.state.data
            hostid = record["hostid"]
            new_hostid = 0
            if hostid == 0:
                new_hostid = self.state.next_hostid
                self.state.next_hostid += 1

            # Reported results: <result> elements written by client/result.cpp RESULT::write(to_server).
            for block in tag_blocks(request, "result"):
                name = tag_text(block, "name")
                if not name:
                    continue
                exit_status = int(tag_number(block, "exit_status"))
                result_state = int(tag_number(block, "state"))
                outcome = "success" if exit_status == 0 and result_state == 5 else "error"
                entry = data["results"].setdefault(name, {"status": "unknown"})
                stderr = tag_text(block, "stderr_out", "")
                entry.update({
                    "status": "reported",
                    "reported_time": now,
                    "exit_status": exit_status,
                    "state": result_state,
                    "state_name": RESULT_STATE_NAMES.get(result_state, "unknown"),
                    "outcome": outcome,
                    "final_cpu_time": tag_number(block, "final_cpu_time"),
                    "final_elapsed_time": tag_number(block, "final_elapsed_time"),
                    "stderr_out": stderr[-2000:],
                    "output_uploaded": entry.get("output_file") in data["uploads"]
                    and data["uploads"][entry["output_file"]].get("complete", False),
                })
                if outcome == "success":
                    self.credit += 10.0
                record["reported"].append({"name": name, "exit_status": exit_status,
                                           "state": result_state, "outcome": outcome})
                record["acked"].append(name)
                LOG.info("scheduler: result %s reported: exit status %d, state %s -> %s",
                         name, exit_status, RESULT_STATE_NAMES.get(result_state, result_state), outcome)

            wants_work = (record["work_req_seconds"] > 0 or record["cpu_req_secs"] > 0
                          or record["cpu_req_instances"] > 0)
            to_send = []
            if not record["dont_send_work"] and (wants_work or self.opts.send_always):
                to_send = [n for n, r in sorted(data["results"].items(), key=lambda kv: _natural(kv[0]))
                           if r.get("status") == "unsent"]
                if self.opts.max_per_rpc > 0:
                    to_send = to_send[:self.opts.max_per_rpc]
            for name in to_send:
                data["results"][name]["status"] = "sent"
                data["results"][name]["sent_time"] = now
            record["sent"] = to_send

            requests = data["scheduler_requests"]
            requests.append(record)
            del requests[:-ProjectState.MAX_REQUESTS_KEPT]
            self.state.save()

        app_version = self._client_app_version(request)
        reply = self._reply(now, new_hostid, to_send, record["acked"], app_version)
        LOG.info("scheduler: request from host %d (seqno %d, asks %.0f s / %.2f instances): sent %d, acked %d",
                 hostid, record["rpc_seqno"], record["cpu_req_secs"], record["cpu_req_instances"],
                 len(to_send), len(record["acked"]))
        return reply

    @staticmethod
    def _client_app_version(request):
        """The client's description of our anonymous-platform app version (<app_versions> in the
        request), so results name the same platform/version/plan class, as a real server does."""
        for block in tag_blocks(request, "app_version"):
            if tag_text(block, "app_name") == APP_NAME:
                return {
                    "platform": tag_text(block, "platform", ""),
                    "version_num": int(tag_number(block, "version_num", APP_VERSION_NUM)),
                    "plan_class": tag_text(block, "plan_class", ""),
                }
        return None

    def _reply(self, now, new_hostid, to_send, acked, app_version):
        """Build the <scheduler_reply>: project/user/host fields, then app, file_infos, workunits,
        results for the new jobs, then result_acks (order as in sched/sched_types.cpp
        SCHEDULER_REPLY::write)."""
        opts = self.opts
        out = ["<scheduler_reply>",
               "<scheduler_version>%d</scheduler_version>" % 709,
               "<master_url>%s</master_url>" % xml_escape(self.urls["master"]),
               "<project_name>%s</project_name>" % xml_escape(opts.project_name),
               "<user_name>nicer tester</user_name>",
               "<user_total_credit>%.1f</user_total_credit>" % self.credit,
               "<user_expavg_credit>%.1f</user_expavg_credit>" % (self.credit / 2),
               "<user_create_time>%d</user_create_time>" % int(self.state.data["started"]),
               "<host_total_credit>%.1f</host_total_credit>" % self.credit,
               "<host_expavg_credit>%.1f</host_expavg_credit>" % (self.credit / 2),
               "<host_create_time>%d</host_create_time>" % int(self.state.data["started"]),
               "<team_name></team_name>",
               "<email_hash>00000000000000000000000000000000</email_hash>",
               "<cross_project_id>11111111111111111111111111111111</cross_project_id>",
               "<project_preferences>\n<resource_share>100</resource_share>\n</project_preferences>"]
        if new_hostid:
            out.append("<hostid>%d</hostid>" % new_hostid)
        if opts.next_rpc_delay > 0:
            out.append("<next_rpc_delay>%g</next_rpc_delay>" % opts.next_rpc_delay)
        if opts.notice:
            out.append('<message priority="notice">%s</message>' % xml_escape(opts.notice))
        if to_send:
            out.append("<app>\n<name>%s</name>\n<user_friendly_name>nicer test app</user_friendly_name>\n"
                       "</app>" % APP_NAME)
        results = self.state.data["results"]
        for name in to_send:
            r = results[name]
            out.append(self._input_file_info(r["input_file"]))
            out.append(self._output_file_info(r["output_file"]))
        for name in to_send:
            out.append(self._workunit(results[name]))
        for name in to_send:
            out.append(self._result(name, results[name], now, app_version))
        for name in acked:
            out.append("<result_ack>\n<name>%s</name>\n</result_ack>" % xml_escape(name))
        out.append("</scheduler_reply>")
        return ("\n".join(out) + "\n").encode()

    def _input_file_info(self, name):
        """An input file (client_types.cpp FILE_INFO::parse): download URL, size and MD5."""
        return ("<file_info>\n<name>%s</name>\n<url>%s%s</url>\n<md5_cksum>%s</md5_cksum>\n"
                "<nbytes>%d</nbytes>\n</file_info>"
                % (name, self.urls["download"], name, self.state.content.md5, self.state.content.size))

    def _output_file_info(self, name):
        """An output file: it has an upload URL (FILE_INFO::uploadable()) and a size limit."""
        return ("<file_info>\n<name>%s</name>\n<generated_locally/>\n<upload_when_present/>\n"
                "<max_nbytes>%d</max_nbytes>\n<url>%s</url>\n</file_info>"
                % (name, max(self.opts.output_bytes * 2, 1 << 20), self.urls["upload"]))

    def _workunit(self, r):
        """A work unit (client_types.cpp WORKUNIT::parse). The input file is copied into the slot
        directory (<copy_file/>), so the app reads a plain file named "in", not a BOINC soft link."""
        opts = self.opts
        fpops_est = max(opts.task_seconds, 1.0) * APP_FLOPS
        command = "--seconds %g --output-bytes %d" % (opts.task_seconds, opts.output_bytes)
        if opts.task_exit_status:
            command += " --exit-status %d" % opts.task_exit_status
        return ("<workunit>\n<name>%s</name>\n<app_name>%s</app_name>\n<version_num>%d</version_num>\n"
                "<command_line>%s</command_line>\n"
                "<rsc_fpops_est>%.0f</rsc_fpops_est>\n<rsc_fpops_bound>%.0f</rsc_fpops_bound>\n"
                "<rsc_memory_bound>%.0f</rsc_memory_bound>\n<rsc_disk_bound>%.0f</rsc_disk_bound>\n"
                "<file_ref>\n<file_name>%s</file_name>\n<open_name>%s</open_name>\n<copy_file/>\n"
                "</file_ref>\n</workunit>"
                % (r["wu"], APP_NAME, APP_VERSION_NUM, command,
                   fpops_est, fpops_est * opts.bound_factor if opts.bound_factor else
                   max(fpops_est * 1000, 86400 * APP_FLOPS),
                   2e8, max(1e9, 3.0 * self.state.content.size + 1e8 + 2.0 * opts.output_bytes),
                   r["input_file"], INPUT_OPEN_NAME))

    def _result(self, name, r, now, app_version):
        """A result (client/result.cpp RESULT::parse_server): its output file is copied back from the
        slot directory when the app exits (<copy_file/>, ACTIVE_TASK::copy_output_files)."""
        version = ""
        if app_version:
            version = "<platform>%s</platform>\n<version_num>%d</version_num>\n" % (
                xml_escape(app_version["platform"]), app_version["version_num"])
            if app_version["plan_class"]:
                version += "<plan_class>%s</plan_class>\n" % xml_escape(app_version["plan_class"])
        return ("<result>\n<name>%s</name>\n<wu_name>%s</wu_name>\n<report_deadline>%d</report_deadline>\n"
                "%s<file_ref>\n<file_name>%s</file_name>\n<open_name>%s</open_name>\n<copy_file/>\n"
                "</file_ref>\n</result>"
                % (name, r["wu"], int(now + self.opts.deadline_seconds), version,
                   r["output_file"], OUTPUT_OPEN_NAME))


def _natural(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# --------------------------------------------------------------------------------------------------
# The file upload handler


class UploadHandler:
    """sched/file_upload_handler.cpp for one request body (client/file_xfer.cpp FILE_XFER::init_upload).

    <data_server_request> ... <get_file_size>NAME</get_file_size>   -> <file_size>bytes we have</file_size>
    <data_server_request> ... <file_upload> <file_info> <name> <xml_signature> <max_nbytes> </file_info>
        <nbytes> <md5_cksum> <offset> <data>\\n RAW BYTES (nbytes - offset of them)
    Replies: <data_server_reply><status>0|1|-1</status>[<message>..</message>]</data_server_reply>
    (0 ok, 1 transient error: the client retries, -1 permanent: the upload fails).
    Signatures are not checked (like a project with <ignore_upload_certificates/>); the size and, once
    the file is complete, its MD5 are, and the outcome is recorded in the state file."""

    def __init__(self, upload_dir, state):
        self.upload_dir = upload_dir
        self.state = state

    @staticmethod
    def reply(status, extra=""):
        body = "<data_server_reply>\n    <status>%d</status>\n" % status
        if extra:
            body += "    %s\n" % extra
        return (body + "</data_server_reply>\n").encode()

    def error(self, transient, message):
        LOG.warning("upload: %s error: %s", "transient" if transient else "permanent", message)
        return self.reply(1 if transient else -1, "<message>%s</message>" % xml_escape(message))

    def path(self, name):
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name or "") or ".." in name:
            return None
        return os.path.join(self.upload_dir, name)

    def handle(self, rfile, length):
        """Read the header line by line up to <data>, then stream the raw bytes to the file."""
        header = b""
        while len(header) < length and not header.endswith(b"<data>\n"):
            line = rfile.readline(min(4096, length - len(header)))
            if not line:
                break
            header += line
        remaining = length - len(header)
        text = header.decode("utf-8", "replace")

        size_query = tag_text(text, "get_file_size")
        if size_query is not None:
            self._discard(rfile, remaining)
            path = self.path(size_query)
            if path is None:
                return self.error(False, "Bad filename")
            size = os.path.getsize(path) if os.path.exists(path) else 0
            LOG.info("upload: get_file_size %s -> %d", size_query, size)
            return self.reply(0, "<file_size>%d</file_size>" % size)

        if "<file_upload>" not in text:
            self._discard(rfile, remaining)
            return self.error(True, "no command")
        name = tag_text(text, "name")
        nbytes = tag_number(text, "nbytes", -1)
        max_nbytes = tag_number(text, "max_nbytes", -1)
        offset = int(tag_number(text, "offset", 0))
        md5_expected = tag_text(text, "md5_cksum", "")
        if not header.endswith(b"<data>\n"):
            self._discard(rfile, remaining)
            return self.error(False, "Missing <data> tag")
        path = self.path(name)
        if path is None:
            self._discard(rfile, remaining)
            return self.error(False, "invalid filename: %s" % name)
        if nbytes < 0:
            self._discard(rfile, remaining)
            return self.error(False, "nbytes missing or negative")
        if 0 <= max_nbytes < nbytes:
            self._discard(rfile, remaining)
            return self.error(False, "file size (%d KB) exceeds limit (%d KB)"
                              % (nbytes / 1024, max_nbytes / 1024))
        have = os.path.getsize(path) if os.path.exists(path) else 0
        if have < offset:
            self._discard(rfile, remaining)
            return self.error(True, "length of file %s %d bytes < offset %d bytes" % (name, have, offset))

        # Copy the body from offset on (the real handler truncates whatever was beyond the offset).
        want = int(nbytes) - offset
        received = 0
        with open(path, "r+b" if os.path.exists(path) else "wb") as f:
            f.seek(offset)
            f.truncate()
            while received < min(want, remaining):
                chunk = rfile.read(min(CHUNK, want - received, remaining - received))
                if not chunk:
                    break
                f.write(chunk)
                received += len(chunk)
        self._discard(rfile, remaining - received)
        size = offset + received
        complete = size >= nbytes
        md5 = ""
        if complete:
            md5 = _md5_file(path)
        entry = {
            "time": time.time(), "nbytes": nbytes, "offset": offset, "bytes_received": received,
            "size": size, "md5": md5, "md5_expected": md5_expected, "complete": complete,
            "size_ok": size == nbytes, "md5_ok": (md5 == md5_expected) if complete else None,
        }
        if not complete:
            entry["status"] = "partial"
        elif md5 != md5_expected:
            entry["status"] = "md5 mismatch"
        else:
            entry["status"] = "ok"
        with self.state.lock:
            self.state.data["uploads"][name] = entry
            self.state.save()
        LOG.info("upload: %s: %d of %d bytes (offset %d), %s", name, size, nbytes, offset, entry["status"])
        if not complete:
            return self.error(True, "upload of %s incomplete: %d of %d bytes" % (name, size, nbytes))
        if md5 != md5_expected:
            return self.error(False, "md5 of %s is %s, client said %s" % (name, md5, md5_expected))
        return self.reply(0)

    @staticmethod
    def _discard(rfile, n):
        while n > 0:
            chunk = rfile.read(min(CHUNK, n))
            if not chunk:
                return
            n -= len(chunk)


def _md5_file(path):
    md5 = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            md5.update(chunk)
    return md5.hexdigest()


# --------------------------------------------------------------------------------------------------
# HTTP


class ProjectServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, opts):
        super().__init__(address, ProjectRequestHandler)
        self.opts = opts
        host = opts.host if opts.host not in ("0.0.0.0", "") else "127.0.0.1"
        base = "http://%s:%d" % (host, self.server_address[1])
        self.urls = {
            "master": "%s/%s/" % (base, PROJECT_DIR_NAME),
            "scheduler": "%s/%s/cgi" % (base, CGI_DIR_NAME),
            "download": "%s/%s/download/" % (base, PROJECT_DIR_NAME),
            "upload": "%s/%s/file_upload_handler" % (base, CGI_DIR_NAME),
        }
        os.makedirs(opts.dir, exist_ok=True)
        self.upload_dir = os.path.join(opts.dir, "upload")
        os.makedirs(self.upload_dir, exist_ok=True)
        content = InputContent(opts.input_bytes, opts.input_content)
        options = {k: v for k, v in vars(opts).items() if k != "authenticator"}
        self.state = ProjectState(opts.state_file, self.urls["master"], options, content, opts.workunits)
        self.scheduler = Scheduler(opts, self.state, self.urls)
        self.uploads = UploadHandler(self.upload_dir, self.state)


class ProjectRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"       # keep-alive, and "Expect: 100-continue" answered for big POSTs
    server_version = "nicertest/1"

    def log_message(self, fmt, *args):
        LOG.debug("http: %s %s", self.address_string(), fmt % args)

    def _send(self, status, body, content_type="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        srv = self.server
        path = self.path.split("?", 1)[0]
        if path in ("/%s" % PROJECT_DIR_NAME, "/%s/" % PROJECT_DIR_NAME, "/%s/index.php" % PROJECT_DIR_NAME):
            self._master_page()
        elif path.startswith("/%s/download/" % PROJECT_DIR_NAME):
            self._download(path.rsplit("/", 1)[1])
        elif path == "/%s/state.json" % PROJECT_DIR_NAME:
            with srv.state.lock:
                body = json.dumps(srv.state.data, indent=1, sort_keys=True).encode()
            self._send(HTTPStatus.OK, body, "application/json")
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n")

    def do_POST(self):
        srv = self.server
        path = self.path.split("?", 1)[0]
        if path == "/%s/cgi" % CGI_DIR_NAME:
            request = self._read_body().decode("utf-8", "replace")
            body = srv.scheduler.handle(request)
            self._send(HTTPStatus.OK, body, "text/xml")
        elif path == "/%s/file_upload_handler" % CGI_DIR_NAME:
            length = int(self.headers.get("Content-Length") or 0)
            body = srv.uploads.handle(self.rfile, length)
            self._send(HTTPStatus.OK, body, "text/plain")
        else:
            self._read_body()
            self._send(HTTPStatus.NOT_FOUND, b"not found\n")

    def _master_page(self):
        """The master page. The client looks for <scheduler>URL</scheduler> and
        <link rel="boinc_scheduler" href="URL"> (one tag per line is enough; it reads 256-byte lines)."""
        srv = self.server
        sched = srv.urls["scheduler"]
        body = ("<html>\n<head>\n<title>%s</title>\n"
                '<link rel="boinc_scheduler" href="%s">\n'
                "</head>\n<body>\n<h1>%s</h1>\n"
                "<!--\n<scheduler>%s</scheduler>\n-->\n"
                "<p>A local BOINC project for nicer's tests.</p>\n</body>\n</html>\n"
                % (xml_escape(srv.opts.project_name), sched, xml_escape(srv.opts.project_name), sched))
        with srv.state.lock:
            srv.state.data["master_fetches"].append({"time": time.time()})
            srv.state.save()
        LOG.info("master page fetched")
        self._send(HTTPStatus.OK, body.encode(), "text/html")

    def _download(self, name):
        """Stream an input file, honouring "Range: bytes=N-" (the client's resume request)."""
        srv = self.server
        content = srv.state.content
        if name not in srv.state.input_files:
            self._send(HTTPStatus.NOT_FOUND, b"no such file\n")
            return
        offset = 0
        status = HTTPStatus.OK
        headers = [("Accept-Ranges", "bytes")]
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", "").strip())
        if m:
            offset = int(m.group(1))
            if offset >= content.size:
                self._send(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE, b"",
                           headers=[("Content-Range", "bytes */%d" % content.size)])
                return
            status = HTTPStatus.PARTIAL_CONTENT
            headers.append(("Content-Range", "bytes %d-%d/%d" % (offset, content.size - 1, content.size)))
        length = content.size - offset
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        sent = 0
        started = time.monotonic()
        rate = srv.opts.download_rate
        try:
            if self.command != "HEAD":
                # Throttled downloads go in 64 KiB steps so the rate is smooth.
                for chunk in content.chunks(offset, 65536 if rate > 0 else CHUNK):
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    if rate > 0:
                        ahead = sent / rate - (time.monotonic() - started)
                        if ahead > 0:
                            time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        complete = sent == length
        with srv.state.lock:
            srv.state.data["downloads"].append({"time": time.time(), "file": name, "offset": offset,
                                                "bytes": sent, "complete": complete})
            srv.state.save()
        LOG.info("download: %s from offset %d: %d bytes%s", name, offset, sent,
                 "" if complete else " (client went away)")


# --------------------------------------------------------------------------------------------------
# prepare-client


def app_info_xml(task_seconds):
    """The anonymous-platform description (client/cs_statefile.cpp CLIENT_STATE::parse_app_info).

    api_version >= 6.0 matters: only then does the client give the app a memory-mapped file
    (boinc_mmap_file, client/app_start.cpp) that a script can open; older apps get SysV shared memory."""
    return """<app_info>
    <app>
        <name>{app}</name>
        <user_friendly_name>nicer test app</user_friendly_name>
    </app>
    <file_info>
        <name>{file}</name>
        <executable/>
    </file_info>
    <app_version>
        <app_name>{app}</app_name>
        <version_num>{version}</version_num>
        <api_version>7.20.0</api_version>
        <avg_ncpus>1</avg_ncpus>
        <flops>{flops:.0f}</flops>
        <cmdline>--default-seconds {seconds:g}</cmdline>
        <file_ref>
            <file_name>{file}</file_name>
            <main_program/>
        </file_ref>
    </app_version>
</app_info>
""".format(app=APP_NAME, file=APP_FILE_NAME, version=APP_VERSION_NUM, flops=APP_FLOPS,
           seconds=task_seconds)


CC_CONFIG = """<cc_config>
    <log_flags>
        <file_xfer/>
        <sched_ops/>
        <task/>
    </log_flags>
    <options>
        <report_results_immediately/>
        <skip_cpu_benchmarks/>
        <no_info_fetch/>
    </options>
</cc_config>
"""

# Preferences that let a test run the job now on a busy 2-core machine: no "CPU is busy" suspension,
# no duty cycle, all CPUs, generous disk limits, a small work buffer.
GLOBAL_PREFS_OVERRIDE = """<global_preferences>
    <run_on_batteries>1</run_on_batteries>
    <run_if_user_active>1</run_if_user_active>
    <run_gpu_if_user_active>1</run_gpu_if_user_active>
    <suspend_cpu_usage>0</suspend_cpu_usage>
    <idle_time_to_run>0</idle_time_to_run>
    <max_ncpus_pct>100</max_ncpus_pct>
    <cpu_usage_limit>100</cpu_usage_limit>
    <disk_max_used_gb>0</disk_max_used_gb>
    <disk_max_used_pct>100</disk_max_used_pct>
    <disk_min_free_gb>0.1</disk_min_free_gb>
    <ram_max_used_busy_pct>90</ram_max_used_busy_pct>
    <ram_max_used_idle_pct>90</ram_max_used_idle_pct>
    <work_buf_min_days>0.01</work_buf_min_days>
    <work_buf_additional_days>0</work_buf_additional_days>
</global_preferences>
"""


def prepare_client(opts):
    """Put app_info.xml and the app into the client's directory for the project, before it attaches.

    With --client-config, also write cc_config.xml and global_prefs_override.xml for tests (a running
    client needs `boinccmd --read_cc_config` and `--read_global_prefs_override` to see them)."""
    url = canonical_master_url(opts.url)
    if not valid_master_url(url):
        raise SystemExit("prepare-client: the client would refuse the URL %s (it needs a '.' in the "
                         "host part, e.g. 127.0.0.1)" % url)
    if not os.path.isdir(opts.boinc_dir):
        raise SystemExit("prepare-client: no such directory: %s" % opts.boinc_dir)
    project_dir = os.path.join(opts.boinc_dir, "projects", project_dir_name(url))
    os.makedirs(project_dir, exist_ok=True)
    app_path = os.path.join(project_dir, APP_FILE_NAME)
    with open(APP_SOURCE) as f:
        source = f.read()
    source = re.sub(r"\A#![^\n]*", "#!" + opts.python, source)
    with open(app_path + ".tmp", "w") as f:
        f.write(source)
    os.chmod(app_path + ".tmp", 0o755)
    os.replace(app_path + ".tmp", app_path)
    with open(os.path.join(project_dir, "app_info.xml"), "w") as f:
        f.write(app_info_xml(opts.task_seconds))
    written = [os.path.join(project_dir, "app_info.xml"), app_path]
    if opts.client_config:
        for name, text in (("cc_config.xml", CC_CONFIG), ("global_prefs_override.xml", GLOBAL_PREFS_OVERRIDE)):
            path = os.path.join(opts.boinc_dir, name)
            with open(path, "w") as f:
                f.write(text)
            written.append(path)
    for path in written:
        print(path)
    return 0


# --------------------------------------------------------------------------------------------------
# Command line


def _nonnegative_int(text):
    """A whole number >= 0; 2e8 and 200000000 both work."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % text)
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a whole number >= 0: %r" % text)
    return int(value)


def _port(text):
    value = _nonnegative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError("not a port number: %r" % text)
    return value


def _nonnegative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a finite number >= 0: %r" % text)
    return value


def serve_parser():
    p = argparse.ArgumentParser(
        prog="boinc_test_project.py [serve]",
        usage="%(prog)s [options]",
        description="Serve a local BOINC project (master page, scheduler, downloads, uploads) for the "
                    "real BOINC client. Prints the master URL on stdout; logs to stderr.",
        epilog="Before attaching a client, run: boinc_test_project.py prepare-client --boinc-dir D --url URL")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=0, help="port (default 0: pick a free one)")
    p.add_argument("--dir", help="work directory for uploads and the state file (default: a new temp dir)")
    p.add_argument("--state-file", help="JSON state file (default WORKDIR/state.json)")
    p.add_argument("--url-file", help="also write the master URL to this file (written when ready)")
    p.add_argument("--workunits", type=_nonnegative_int, default=1, help="number of jobs to hand out (default 1)")
    p.add_argument("--input-bytes", type=_nonnegative_int, default=1 << 20,
                   help="size of each job's input file (default 1 MiB)")
    p.add_argument("--input-content", choices=("random", "zeros"), default="random",
                   help="input file content (default: pseudorandom, fixed seed)")
    p.add_argument("--output-bytes", type=_nonnegative_int, default=1024,
                   help="size of each job's output file (default 1024; >= 8192 makes the client ask "
                        "get_file_size before uploading)")
    p.add_argument("--task-seconds", type=_nonnegative_float, default=10.0,
                   help="CPU seconds each job computes (default 10)")
    p.add_argument("--bound-factor", type=_nonnegative_float, default=0,
                   help="rsc_fpops_bound as this many times the estimate, as a project sets it: the client "
                        "aborts a task whose elapsed time passes that many times --task-seconds (a limit "
                        "under 120 s is taken as 12 hours); default 0: a day of wall time")
    p.add_argument("--task-exit-status", type=_nonnegative_int, default=0,
                   help="make the app fail with this exit status at the end (default 0: succeed)")
    p.add_argument("--download-rate", type=_nonnegative_float, default=0,
                   help="limit each download to this many bytes/s (default 0: unlimited)")
    p.add_argument("--max-per-rpc", type=_nonnegative_int, default=0,
                   help="send at most this many jobs per scheduler reply (default 0: all unsent)")
    p.add_argument("--send-always", action="store_true",
                   help="send jobs even when the client did not ask for work")
    p.add_argument("--next-rpc-delay", type=_nonnegative_float, default=0,
                   help="ask the client to contact the scheduler again after this many seconds")
    p.add_argument("--deadline-seconds", type=_nonnegative_float, default=7 * 86400,
                   help="report deadline from the time a job is sent (default 7 days)")
    p.add_argument("--notice", default="", help="send this text as a scheduler notice in every reply")
    p.add_argument("--project-name", default="nicer test project", help="project name (default 'nicer test project')")
    p.add_argument("--authenticator", default="nicertest_authenticator",
                   help="the account key the state file checks requests against (any key is accepted)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every HTTP request")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    return p


def prepare_parser():
    p = argparse.ArgumentParser(
        prog="boinc_test_project.py prepare-client",
        usage="%(prog)s --boinc-dir D --url URL [options]",
        description="Prepare a BOINC data directory for the project at URL: write "
                    "projects/<dir>/app_info.xml and the app, so the client uses the anonymous-platform "
                    "app when it attaches. Run it before the attach. Prints the files it wrote.")
    p.add_argument("--boinc-dir", required=True, help="the client's data directory (boinc --dir)")
    p.add_argument("--url", required=True, help="the project's master URL, as printed by the server")
    p.add_argument("--task-seconds", type=_nonnegative_float, default=10.0,
                   help="CPU seconds the app computes when the job does not say (jobs from the server do)")
    p.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                   help="interpreter for the app's #! line (default /usr/bin/python3)")
    p.add_argument("--client-config", action="store_true",
                   help="also write cc_config.xml (report results immediately, skip benchmarks, no "
                        "project list fetch) and global_prefs_override.xml (never 'CPU busy', all CPUs)")
    return p


def serve(opts):
    level = logging.WARNING if opts.quiet else logging.DEBUG if opts.verbose else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s nicertest %(levelname)s %(message)s")
    if not os.path.exists(APP_SOURCE):
        raise SystemExit("missing %s" % APP_SOURCE)
    if opts.host not in ("0.0.0.0", "") and not valid_master_url("http://%s:1/x/" % opts.host):
        raise SystemExit("--host %s: the BOINC client refuses master URLs without a '.' in the host "
                         "(lib/url.cpp valid_master_url); use an IP address such as 127.0.0.1" % opts.host)
    made_dir = opts.dir is None
    if made_dir:
        opts.dir = tempfile.mkdtemp(prefix="nicertest-")
    opts.dir = os.path.abspath(opts.dir)
    if opts.state_file is None:
        opts.state_file = os.path.join(opts.dir, "state.json")
    try:
        server = ProjectServer((opts.host, opts.port), opts)
    except OSError as e:
        if made_dir:
            os.rmdir(opts.dir)
        raise SystemExit("cannot listen on %s:%d: %s" % (opts.host, opts.port, e.strerror or e))

    url = server.urls["master"]
    if opts.url_file:
        with open(opts.url_file + ".tmp", "w") as f:
            f.write(url + "\n")
        os.replace(opts.url_file + ".tmp", opts.url_file)
    print(url, flush=True)
    LOG.info("serving %s (work dir %s, state %s, %d job(s), %d-byte inputs, %g CPU s each)",
             url, opts.dir, opts.state_file, opts.workunits, opts.input_bytes, opts.task_seconds)

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        with server.state.lock:
            server.state.save()
        LOG.info("stopped")
    return 0


def main(argv):
    if argv and argv[0] == "prepare-client":
        return prepare_client(prepare_parser().parse_args(argv[1:]))
    if argv and argv[0] == "serve":
        argv = argv[1:]
    elif argv and not argv[0].startswith("-"):
        raise SystemExit("boinc_test_project.py: unknown command %r (commands: serve, prepare-client; "
                         "see --help)" % argv[0])
    return serve(serve_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
