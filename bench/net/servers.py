"""The servers in the server namespace: nginx (HTTP/1.1 on :80, h2c on :8080, h2 over TLS on :8443) and
nghttpd (h2c on :8081, RFC 9218 priorities)."""

import subprocess
import sys
import time

from link import SERVER_IP
from process import die, run

PORTS = (80, 8080, 8081, 8443)
# Connects to argv[1]:argv[2] from the client namespace.
CONNECT = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()"


def nginx_conf(work):
    n = work / "nginx"
    return f"""daemon off;
master_process off;
worker_processes 1;
pid {n}/nginx.pid;
error_log {n}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {n}/tmp/body;
    proxy_temp_path {n}/tmp/proxy;
    fastcgi_temp_path {n}/tmp/fastcgi;
    uwsgi_temp_path {n}/tmp/uwsgi;
    scgi_temp_path {n}/tmp/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 10000;
    server {{ listen {SERVER_IP}:80; root {work}/www; }}
    server {{ listen {SERVER_IP}:8080 http2; root {work}/www; }}
    server {{
        listen {SERVER_IP}:8443 ssl http2;
        ssl_certificate {work}/tls/server.pem;
        ssl_certificate_key {work}/tls/server.key;
        root {work}/www;
    }}
}}
"""


def start_servers(link, work, processes):
    """Starts both servers, adding them to @p processes (the runner stops those on exit), and waits until every
    port answers."""
    n = work / "nginx"
    for d in (n / "tmp", work / "logs", work / "tls"):
        d.mkdir(parents=True, exist_ok=True)
    # curl-h2 goes over TLS: curl 7.88 (Debian 12) fails reusing an h2c prior-knowledge connection for
    # parallel transfers ("Error in the HTTP2 framing layer", curl issue #10634, fixed in 8.0).
    run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", f"/CN={SERVER_IP}", "-addext", f"subjectAltName=IP:{SERVER_IP}",
         "-keyout", work / "tls/server.key", "-out", work / "tls/server.pem"])
    (n / "nginx.conf").write_text(nginx_conf(work))
    for name, args in (("nginx", ["nginx", "-c", n / "nginx.conf", "-p", n]),
                       ("nghttpd", ["nghttpd", "--no-tls", "--no-rfc7540-pri", "-d", work / "www", "8081"])):
        with open(work / f"logs/{name}.log", "a") as out:
            processes.append(subprocess.Popen(link.in_server(*args), stdin=subprocess.DEVNULL, stdout=out,
                                              stderr=subprocess.STDOUT))
    for port in PORTS:
        for _ in range(50):
            if subprocess.run(link.in_client(sys.executable, "-c", CONNECT, SERVER_IP, port),
                              stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.1)
        else:
            die(f"server on port {port} did not come up; see {work}/logs")
