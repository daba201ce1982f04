#!/usr/bin/env bash
# Start/stop the REAL HTTP/2 servers that nicer's download tests talk to.
#
# Usage:  tests/harness/h2-servers.sh start DIR   # make certs + docroot in DIR, start servers, print env
#         tests/harness/h2-servers.sh env DIR     # print the env of a running set (DIR/env)
#         tests/harness/h2-servers.sh stop DIR    # stop what `start` started in DIR
#
# WHY real servers: the transport and fetcher must interoperate with what users will meet (nginx) and with
# the reference implementation (nghttpd), including TLS with ALPN "h2", certificate verification and h2c
# with prior knowledge. Everything is made at test time inside DIR: a private CA, a certificate for
# "localhost" (SAN DNS:localhost, IP:127.0.0.1, IP:::1), one for the wrong name "wrong.example" signed by the
# same CA (so only the name is wrong), and a document root with deterministic files plus SHA256SUMS.
# Servers listen on loopback only, on free ports picked at start; DIR/env holds them as shell assignments
# (tests parse it, shells can `. DIR/env`). Works as root and as a normal user: nginx runs as one
# foreground process (no master, so it never switches user) with every path it writes inside DIR.
# stdout carries ONLY the env lines; every diagnostic goes to stderr.
set -euo pipefail

log() { echo "h2-servers: $*" >&2; }
die() { log "$*"; exit 1; }

usage() { echo "usage: $0 start|stop|env DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
CMD=$1
DIR=$2
[[ -n $DIR ]] || usage
if [[ -d $DIR ]]; then DIR=$(cd "$DIR" && pwd); fi # absolute: servers and tests use it from elsewhere

# Deterministic bytes (AES-CTR keystream of zeros): the same files, hence the same hashes, on every machine.
det_bytes() { # SIZE
  head -c "$1" /dev/zero |
    openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000
}

make_key_cert() { # NAME SAN... : key + certificate signed by the test CA
  local name=$1; shift
  local san=$1; shift
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$DIR/tls/$name.key" -out "$DIR/tls/$name.csr" -subj "/CN=$name" 2>/dev/null
  printf '%s\n' "subjectAltName=$san" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$DIR/tls/$name.ext"
  openssl x509 -req -in "$DIR/tls/$name.csr" -CA "$DIR/tls/ca.pem" -CAkey "$DIR/tls/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -days 30 -extfile "$DIR/tls/$name.ext" \
    -out "$DIR/tls/$name.pem" 2>/dev/null
}

make_pki() {
  install -d -m 0700 "$DIR/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$DIR/tls/ca.key" -out "$DIR/tls/ca.pem" -days 30 -subj "/CN=nicer test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  make_key_cert localhost "DNS:localhost,IP:127.0.0.1,IP:::1"
  make_key_cert wrong.example "DNS:wrong.example"
}

make_www() {
  local www=$DIR/www
  mkdir -p "$www/dir"
  printf 'hello from the nicer test servers\n' >"$www/hello.txt"
  printf '<!doctype html><title>nicer h2 test</title><p>nicer h2 test</p>\n' >"$www/index.html"
  printf 'nested\n' >"$www/dir/nested.txt"
  det_bytes 1024 >"$www/1k.bin"
  det_bytes 65536 >"$www/64k.bin"
  det_bytes 1048576 >"$www/1m.bin"
  det_bytes 16777216 >"$www/16m.bin"
  (cd "$www" && sha256sum hello.txt index.html dir/nested.txt 1k.bin 64k.bin 1m.bin 16m.bin >SHA256SUMS)
}

have_ipv6() { grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; }

declare -A USED_PORTS=()
# Sets PICKED to a TCP port nothing on this machine uses now (and not picked before in this run; not in a
# $(...) subshell, which would forget that). Free at this moment only: start_server retries on a clash.
PICKED=""
pick_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    [[ -z ${USED_PORTS[$p]:-} ]] || continue
    # Without ss (iproute2) take it unchecked: start_server retries when a server cannot bind.
    if ! command -v ss >/dev/null || [[ -z $(ss -Htan "( sport = :$p )" 2>/dev/null) ]]; then
      USED_PORTS[$p]=1 PICKED=$p
      return 0
    fi
  done
  die "found no free TCP port"
}

accepts() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; } # HOST PORT

# The command line of server NAME on PORT (nginx's ports come from its config, written before).
server_cmd() { # NAME PORT
  local tls=$DIR/tls
  case "$1" in
  # --no-rfc7540-pri: nghttpd honours RFC 9218 `priority: u=N` only with it (and then announces
  # SETTINGS_NO_RFC7540_PRIORITIES=1).
  nghttpd-h2c) echo nghttpd --no-tls --no-rfc7540-pri -a 127.0.0.1 -d "$DIR/www" "$2" ;;
  nghttpd-tls) echo nghttpd --no-rfc7540-pri -a 127.0.0.1 -d "$DIR/www" "$2" "$tls/localhost.key" "$tls/localhost.pem" ;;
  nghttpd-wrong-name) echo nghttpd -a 127.0.0.1 -d "$DIR/www" "$2" "$tls/wrong.example.key" "$tls/wrong.example.pem" ;;
  nginx) echo nginx -p "$DIR/nginx/" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/error.log" ;;
  esac
}

# 20 response headers of 4000 bytes each: 80 kB, above the fetcher's 64 KiB header limit. (One nginx
# config token holds at most ~4 kB, hence several headers.)
big_headers() {
  local i value
  value=$(head -c 4000 /dev/zero | tr '\0' x)
  for ((i = 1; i <= 20; i++)); do printf '            add_header X-Big-%d %s always;\n' "$i" "$value"; done
}

write_nginx_conf() { # TLS_PORT H2C_PORT HTTP1_TLS_PORT QUIRKS_PORT GOAWAY_PORT NGHTTPD_H2C_PORT
  local n=$DIR/nginx v6=""
  mkdir -p "$n/tmp"
  if have_ipv6; then v6="listen [::1]:$1 ssl http2;"; fi
  cat >"$n/nginx.conf" <<EOF
# Written by tests/harness/h2-servers.sh. One foreground process, every path inside $DIR.
daemon off;
master_process off;
pid $n/nginx.pid;
error_log $n/error.log info;
events { worker_connections 256; }
http {
    access_log $n/access.log;
    client_body_temp_path $n/tmp/body;
    proxy_temp_path $n/tmp/proxy;
    fastcgi_temp_path $n/tmp/fastcgi;
    uwsgi_temp_path $n/tmp/uwsgi;
    scgi_temp_path $n/tmp/scgi;
    types { text/html html; text/plain txt; application/octet-stream bin; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$1 ssl http2;
        $v6
        server_name localhost;
        ssl_certificate $DIR/tls/localhost.pem;
        ssl_certificate_key $DIR/tls/localhost.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $DIR/www;
        # A redirect from https to http, which the fetcher must refuse to follow.
        location ~ ^/downgrade(/.*)\$ { return 302 http://127.0.0.1:$2\$1; }
    }
    server {
        # h2c with prior knowledge: nginx 1.22 speaks HTTP/2 on a plain listener marked http2.
        listen 127.0.0.1:$2 http2;
        server_name localhost;
        root $DIR/www;
    }
    server {
        # TLS without http2: ALPN offers no h2 here (nginx >= 1.21.4 then refuses a client offering only h2).
        listen 127.0.0.1:$3 ssl;
        server_name localhost;
        ssl_certificate $DIR/tls/localhost.pem;
        ssl_certificate_key $DIR/tls/localhost.key;
        root $DIR/www;
    }
    # The fetcher's tests: one line per request with nginx's connection serial number, so a test can count
    # TCP connections and see the Range each request carried.
    log_format nicer_fetch '\$connection \$connection_requests "\$request_uri" "\$http_range" \$status \$body_bytes_sent';
    server {
        # h2c. /: the document root. /norange/: Range ignored (always 200). /slow/: 1 MB/s per request.
        # /busy/: 503 with Retry-After: 1. /bigheaders/: a response header block of ~80 kB.
        # Redirects, with relative Locations (absolute_redirect off): /moved/X -> 301 /hop/X -> 307 /X;
        # /relative/a/D/F -> 302 ../../../D/F (relative to the request's path; for files one directory deep,
        # as the tests' are); /loop/X -> 302 to itself;
        # /elsewhere/X -> 308 to nghttpd (h2c), another origin; /nowhere/: 302 without a Location.
        listen 127.0.0.1:$4 http2;
        server_name localhost;
        access_log $n/quirks.log nicer_fetch;
        root $DIR/www;
        absolute_redirect off;
        location ~ ^/moved(/.*)\$ { return 301 /hop\$1; }
        location ~ ^/hop(/.*)\$ { return 307 \$1; }
        location ~ ^/relative/a/(.*)\$ { return 302 ../../../\$1; }
        location /loop/ { return 302 \$uri; }
        location ~ ^/elsewhere(/.*)\$ { return 308 http://127.0.0.1:$6\$1; }
        location /nowhere/ { add_header X-Nothing 1; return 302; }
        location /norange/ { alias $DIR/www/; max_ranges 0; }
        location /slow/ { alias $DIR/www/; limit_rate 1m; }
        location /busy/ { add_header Retry-After 1 always; return 503; }
        # nginx's open connections (of all its servers, this request's own included): nginx writes a request's
        # log line before it closes the connection, so at 1 every earlier request is in the logs.
        location = /nginx-status { stub_status; access_log off; }
        location /bigheaders/ {
            alias $DIR/www/;
$(big_headers)
        }
    }
    server {
        # h2c that ends each connection with GOAWAY after 4 requests (keepalive_requests applies to HTTP/2
        # since nginx 1.19.7): streams above the GOAWAY's last stream id must go to a new connection.
        listen 127.0.0.1:$5 http2;
        server_name localhost;
        keepalive_requests 4;
        access_log $n/goaway.log nicer_fetch;
        root $DIR/www;
    }
}
EOF
}

# Starts server NAME, waits until its ports accept, records its PID. Echoes the port(s) it got.
PORT_A="" PORT_B="" PORT_C="" PORT_D="" PORT_E=""
start_server() { # NAME
  local name=$1 attempt i pid cmd ok
  for ((attempt = 0; attempt < 5; attempt++)); do
    pick_port; PORT_A=$PICKED
    PORT_B="" PORT_C="" PORT_D="" PORT_E=""
    if [[ $name == nginx ]]; then
      pick_port; PORT_B=$PICKED
      pick_port; PORT_C=$PICKED
      pick_port; PORT_D=$PICKED
      pick_port; PORT_E=$PICKED
      write_nginx_conf "$PORT_A" "$PORT_B" "$PORT_C" "$PORT_D" "$PORT_E" "$NGHTTPD_H2C_PORT"
    fi
    cmd=$(server_cmd "$name" "$PORT_A")
    # setsid + all three streams redirected: the server outlives this script without holding the caller's
    # (CTest's) pipes open.
    # shellcheck disable=SC2086
    setsid $cmd </dev/null >>"$DIR/logs/$name.log" 2>&1 &
    pid=$!
    echo "$pid" >"$DIR/pids/$name.pid"
    ok=""
    for ((i = 0; i < 100; i++)); do # bounded: 10 s
      running "$pid" || break
      if accepts 127.0.0.1 "$PORT_A" && { [[ -z $PORT_B ]] || accepts 127.0.0.1 "$PORT_B"; } &&
        { [[ -z $PORT_C ]] || accepts 127.0.0.1 "$PORT_C"; } &&
        { [[ -z $PORT_D ]] || accepts 127.0.0.1 "$PORT_D"; } &&
        { [[ -z $PORT_E ]] || accepts 127.0.0.1 "$PORT_E"; }; then ok=1; break; fi
      sleep 0.1
    done
    if [[ -n $ok ]]; then
      log "$name: pid $pid, port(s) $PORT_A${PORT_B:+ $PORT_B}${PORT_C:+ $PORT_C}${PORT_D:+ $PORT_D}${PORT_E:+ $PORT_E}"
      return 0
    fi
    log "$name did not come up on port(s) $PORT_A${PORT_B:+ $PORT_B}${PORT_C:+ $PORT_C} (attempt $((attempt + 1))); log tail:"
    tail -n 5 "$DIR/logs/$name.log" >&2 || true
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$DIR/pids/$name.pid"
  done
  return 1
}

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; } # single-quoted for sh

# Running and not a zombie: the servers' parent is init once this script exits, and it may reap late.
running() { # PID
  local state
  state=$(sed -E 's/^.*\) (.).*$/\1/' 2>/dev/null <"/proc/$1/stat") || return 1
  [[ $state != Z ]]
}

do_stop() {
  local f pid name i pids=() names=()
  [[ -d $DIR/pids ]] || { log "nothing to stop in $DIR"; return 0; }
  for f in "$DIR"/pids/*.pid; do
    [[ -e $f ]] || continue
    name=$(basename "$f" .pid)
    pid=$(<"$f")
    rm -f "$f"
    # Only a process started from DIR: after a reboot the recorded PID may belong to something else.
    if [[ $pid =~ ^[0-9]+$ ]] && running "$pid" &&
      tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$DIR/"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid") names+=("$name")
    fi
  done
  for i in "${!pids[@]}"; do
    pid=${pids[$i]}
    for ((f = 0; f < 50; f++)); do running "$pid" || break; sleep 0.1; done
    if running "$pid"; then log "${names[$i]} ($pid) ignored SIGTERM; SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
    log "stopped ${names[$i]} ($pid)"
  done
  rm -f "$DIR/env"
}

do_start() {
  local tool
  for tool in nghttpd nginx openssl; do
    command -v "$tool" >/dev/null || die "$tool not found: install nghttp2-server, nginx-light and openssl (packaging/dev.sh does)"
  done
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  do_stop 2>/dev/null       # a crashed run may have left servers behind
  rm -rf "$DIR/tls" "$DIR/www" "$DIR/nginx" "$DIR/logs" "$DIR/pids"
  mkdir -p "$DIR/logs" "$DIR/pids"
  make_pki
  make_www

  local h2c tls wrong ngx_tls ngx_h2c ngx_http1 ngx_quirks ngx_goaway closed ipv6=0
  start_server nghttpd-h2c || { do_stop; die "nghttpd (h2c) did not start; see $DIR/logs"; }
  h2c=$PORT_A
  NGHTTPD_H2C_PORT=$h2c # nginx's /elsewhere/ redirects there
  start_server nghttpd-tls || { do_stop; die "nghttpd (TLS) did not start; see $DIR/logs"; }
  tls=$PORT_A
  start_server nghttpd-wrong-name || { do_stop; die "nghttpd (wrong-name TLS) did not start; see $DIR/logs"; }
  wrong=$PORT_A
  start_server nginx || { do_stop; die "nginx did not start; see $DIR/logs and $DIR/nginx/error.log"; }
  ngx_tls=$PORT_A
  ngx_h2c=$PORT_B
  ngx_http1=$PORT_C
  ngx_quirks=$PORT_D
  ngx_goaway=$PORT_E
  if have_ipv6 && accepts ::1 "$ngx_tls"; then ipv6=1; fi
  pick_port; closed=$PICKED # nothing listens here: "connection refused"

  {
    echo "# Written by tests/harness/h2-servers.sh start; servers stop with: h2-servers.sh stop $(q "$DIR")"
    echo "H2_DIR=$(q "$DIR")"
    echo "H2_CA_FILE=$(q "$DIR/tls/ca.pem")"
    echo "H2_WWW=$(q "$DIR/www")"
    echo "H2_HOST=localhost"
    echo "H2_WRONG_NAME=wrong.example"
    echo "H2_NGHTTPD_H2C_PORT=$h2c"
    echo "H2_NGHTTPD_TLS_PORT=$tls"
    echo "H2_NGHTTPD_WRONG_NAME_PORT=$wrong"
    echo "H2_NGINX_TLS_PORT=$ngx_tls"
    echo "H2_NGINX_H2C_PORT=$ngx_h2c"
    echo "H2_NGINX_HTTP1_TLS_PORT=$ngx_http1"
    echo "H2_CLOSED_PORT=$closed"
    echo "H2_NGINX_QUIRKS_PORT=$ngx_quirks"
    echo "H2_NGINX_QUIRKS_LOG=$(q "$DIR/nginx/quirks.log")"
    echo "H2_NGINX_GOAWAY_PORT=$ngx_goaway"
    echo "H2_NGINX_GOAWAY_LOG=$(q "$DIR/nginx/goaway.log")"
    echo "H2_IPV6=$ipv6"
  } >"$DIR/env.tmp"
  mv "$DIR/env.tmp" "$DIR/env"
  log "ready (IPv6 loopback: $([[ $ipv6 == 1 ]] && echo yes || echo no)); env in $DIR/env"
  cat "$DIR/env"
}

case "$CMD" in
start) do_start ;;
stop) do_stop ;;
env) [[ -r $DIR/env ]] || die "no servers running from $DIR (no $DIR/env): run '$0 start $DIR'"; cat "$DIR/env" ;;
*) usage ;;
esac
