#!/usr/bin/env bash
# How nicer's downloads compare with the usual clients on a shaped link, side by side in one run:
#   (a) throughput on an idle link: nicer (1 connection, K HTTP/2 streams) vs aria2c (K HTTP/1.1
#       connections, same Metalink) and curl (K HTTP/2 streams multiplexed on one connection);
#   (b) the share a competing foreground download (one curl HTTP/1.1 flow) keeps, relative to its
#       throughput alone, while nicer, nicer --nice, aria2c or curl-h2 download in the background;
#   (c) mean completion time of heavy-tailed files with nicer --order srpt vs --order fifo;
#   (d) the same foreground's share while the real BOINC client (Debian's boinc-client) downloads work units
#       from the local test project (tests/boinc/project), with BOINC's defaults and under nicerd, whose
#       nice rate controller sets BOINC's max_bytes_sec_down.
# Ratios of medians over repetitions; runs are interleaved so that drift (other load on the machine) hits
# every client alike.
#
# The link: two network namespaces (server, client) joined by a veth pair; a tbf bottleneck on the
# server->client direction; optional random loss on the client's ingress (nftables numgen). No added delay:
# the kernel has no netem, and an NFQUEUE delay program would need libnetfilter-queue (docs/bench-net.md).
# Servers in the server namespace: nginx (HTTP/1.1 on :80, h2c on :8080, h2 over TLS on :8443) and
# nghttpd (h2c on :8081, RFC 9218 priorities). Files are sparse (zeros) so the server needs no disk; hashes are real.
#
# Usage: bench/net/run.sh [--rate 100mbit] [--reps 3] [--loss 0] [--build DIR] [--streams 10]
#                         [--buffer-ms 50] [--fg-seconds 10] [--warmup 3] [--total-mb 100]
#                         [--cc cubic] [--only abc] [--boinc-warmup 20] [--out FILE] [--keep] [--hold]
# --hold sets up the link, files and servers, prints how to reach them, and waits until interrupted.
# --boinc-warmup: (d) starts the foreground this many seconds after BOINC's downloads began.
# Needs root (namespaces, tc), nginx, nghttpd, curl, openssl; aria2c for (a) and (b), nft for --loss, and
# `nicer fetch` in DIR/app/cli (without it the nicer columns are skipped). (d) needs boinc, boinccmd, jq,
# nsenter, python3 and, for its nicer row, DIR/app/daemon/nicerd, `nicer boinc` and a systemd user manager
# (tests/harness/user-manager.sh starts one when none runs, and stops it again).
# Prints Markdown to stdout (and --out FILE); logs to stderr.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rate=100mbit reps=3 loss=0 build=$root/build streams=10 buffer_ms=50 fg_seconds=10 warmup=3 total_mb=100
cc=cubic only=abc out="" keep="" hold="" boinc_warmup=20
while [[ $# -gt 0 ]]; do
    case $1 in
    --rate) rate=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --streams) streams=$2; shift 2 ;;
    --buffer-ms) buffer_ms=$2; shift 2 ;;
    --fg-seconds) fg_seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --total-mb) total_mb=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --boinc-warmup) boinc_warmup=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --hold) hold=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

log() { echo "bench-net: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $EUID -eq 0 ]] || die "needs root for network namespaces, tc and nft: run it with sudo"
[[ $rate =~ ^[0-9]+(k|m|g)bit$ ]] || die "--rate '$rate' must look like 20mbit, 100mbit or 1gbit"
[[ $loss =~ ^[0-9]+$ && $loss -lt 100 ]] || die "--loss '$loss' must be a whole percentage below 100"
[[ $streams =~ ^[1-9][0-9]*$ ]] || die "--streams '$streams' must be a positive number"
[[ $only =~ ^[abcd]+$ ]] || die "--only '$only' must be made of a, b, c and d"
[[ $boinc_warmup =~ ^[0-9]+$ && $boinc_warmup -ge 5 ]] || die "--boinc-warmup '$boinc_warmup' must be whole seconds, at least 5"
# The tools each part needs, with the Debian package that has them.
declare -A package=([ip]=iproute2 [tc]=iproute2 [nginx]=nginx-light [nghttpd]=nghttp2-server [curl]=curl
    [openssl]=openssl [sha256sum]=coreutils [awk]=mawk [aria2c]=aria2 [nft]=nftables [boinc]=boinc-client
    [boinccmd]=boinc-client [nsenter]=util-linux [jq]=jq [systemctl]=systemd)
tools="ip tc nginx nghttpd curl openssl sha256sum awk"
if [[ $only == *[ab]* ]]; then tools+=" aria2c"; fi
if [[ $loss -gt 0 ]]; then tools+=" nft"; fi
if [[ $only == *d* ]]; then tools+=" boinc boinccmd nsenter jq systemctl"; fi
for tool in $tools; do
    command -v "$tool" >/dev/null || die "'$tool' is missing: apt-get install ${package[$tool]}"
done

nicer=$build/app/cli/nicer
have_nicer=""
if [[ -x $nicer ]] && "$nicer" fetch --help >/dev/null 2>&1; then
    have_nicer=1
else
    log "no working '$nicer fetch' (build the 'nicer' target in $build, or pass --build): nicer columns are skipped"
fi

# Link bytes per second of the bottleneck.
rate_bytes=$(awk -v r="$rate" 'BEGIN { n = r + 0; u = substr(r, length(n "") + 1, 1);
    m = (u == "k") ? 1e3 : (u == "m") ? 1e6 : 1e9; printf "%.0f", n * m / 8 }')
# tbf needs a bucket of at least one timer tick's worth of bytes; 4 ms of the rate, at least 32 KiB.
burst=$(awk -v b="$rate_bytes" 'BEGIN { x = b * 0.004; if (x < 32768) x = 32768; printf "%.0f", x }')

id=$$
ns_s=nbs$id ns_c=nbc$id veth_s=nbvs$id veth_c=nbvc$id
server_ip=10.77.0.1 client_ip=10.77.0.2
work=$(mktemp -d /tmp/nicer-bench-net.XXXXXX)
pids=()

saved_allowed=""
# (d): what the current BOINC run has running (a PID, or empty), and whether this script started the user manager.
d_dir="" d_server="" d_boinc="" d_nicerd="" d_sampler="" um_started=""
slice=nicerbench$id.slice # nicerd's slice in (d): no dash, so not below nicer.slice, which others may use
# Stops what the current (d) run has running, gracefully first, and removes its files.
d_stop() {
    local i
    if [[ -n $d_sampler ]]; then
        kill "$d_sampler" 2>/dev/null || true
        wait "$d_sampler" 2>/dev/null || true
        d_sampler=""
    fi
    if [[ -n $d_nicerd ]]; then
        # On SIGTERM nicerd stops its workload (the BOINC client) and its slice, and puts BOINC's override back.
        kill -TERM "$d_nicerd" 2>/dev/null || true
        for ((i = 0; i < 300; i++)); do kill -0 "$d_nicerd" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$d_nicerd" 2>/dev/null || true
        wait "$d_nicerd" 2>/dev/null || true
        d_nicerd=""
        systemctl --user stop "$slice" 2>/dev/null || true
    fi
    if [[ -n $d_boinc ]]; then
        boinc_rpc --quit >/dev/null 2>&1 || true
        for ((i = 0; i < 150; i++)); do kill -0 "$d_boinc" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$d_boinc" 2>/dev/null || true
        wait "$d_boinc" 2>/dev/null || true
        d_boinc=""
    fi
    if [[ -n $d_server ]]; then
        kill "$d_server" 2>/dev/null || true
        wait "$d_server" 2>/dev/null || true
        d_server=""
    fi
    if [[ -n $d_dir ]]; then rm -rf "$d_dir"; d_dir=""; fi
}
cleanup() {
    local pid
    d_stop
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    # Anything still running inside our namespaces was started by this script.
    for ns in "$ns_c" "$ns_s"; do
        if ip netns list | grep -qw "$ns"; then
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
            ip netns del "$ns" 2>/dev/null || true
        fi
    done
    if [[ -n $saved_allowed ]]; then echo "$saved_allowed" >/proc/sys/net/ipv4/tcp_allowed_congestion_control; fi
    if [[ -n $um_started ]]; then "$root/tests/harness/user-manager.sh" stop 2>/dev/null || true; fi
    if [[ -z $keep ]]; then rm -rf "$work"; else log "kept $work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_s() { ip netns exec "$ns_s" "$@"; }
in_c() { ip netns exec "$ns_c" "$@"; }

# ---------------------------------------------------------------------------------------------- the link
setup_link() {
    ip netns add "$ns_s"
    ip netns add "$ns_c"
    ip link add "$veth_s" type veth peer name "$veth_c"
    ip link set "$veth_s" netns "$ns_s"
    ip link set "$veth_c" netns "$ns_c"
    in_s ip addr add "$server_ip/24" dev "$veth_s"
    in_c ip addr add "$client_ip/24" dev "$veth_c"
    in_s ip link set lo up
    in_c ip link set lo up
    in_s ip link set "$veth_s" up
    in_c ip link set "$veth_c" up
    # The senders' congestion control decides how the flows share the bottleneck (set on both sides). A
    # namespace may only pick one of the allowed list (reno and bbr here); others are allowed for the run
    # and the list is restored on exit.
    local allowed=/proc/sys/net/ipv4/tcp_allowed_congestion_control
    if ! grep -qw "$cc" "$allowed"; then
        grep -qw "$cc" /proc/sys/net/ipv4/tcp_available_congestion_control ||
            die "--cc $cc is not available here: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
        saved_allowed=$(cat "$allowed")
        echo "$saved_allowed $cc" >"$allowed"
        log "allowed congestion control '$cc' in namespaces for this run (restored on exit)"
    fi
    in_s sysctl -qw net.ipv4.tcp_congestion_control="$cc"
    in_c sysctl -qw net.ipv4.tcp_congestion_control="$cc"
    in_s tc qdisc add dev "$veth_s" root tbf rate "$rate" burst "$burst" latency "${buffer_ms}ms"
    if [[ $loss -gt 0 ]]; then
        in_c nft -f - <<EOF
table inet nicerbench {
    chain input {
        type filter hook input priority 0; policy accept;
        ip saddr $server_ip numgen random mod 100 < $loss drop
    }
}
EOF
    fi
}

# --------------------------------------------------------------------------------------------- the files
declare -A zero_hash=()
# sha256 of SIZE zero bytes (cached: the sets share sizes).
zeros_sha256() {
    if [[ -z ${zero_hash[$1]:-} ]]; then
        zero_hash[$1]=$(head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1)
    fi
    echo "${zero_hash[$1]}"
}

# make_set NAME "SIZE..." : sparse files www/NAME-NN.bin, and NAME.list with "file size" lines in order.
make_set() {
    local name=$1 i=0 size
    : >"$work/$name.list"
    for size in $2; do
        i=$((i + 1))
        local file
        file=$(printf '%s-%02d.bin' "$name" "$i")
        truncate -s "$size" "$work/www/$file"
        echo "$file $size" >>"$work/$name.list"
    done
}

# write_meta4 SET BASE_URL > file.meta4
write_meta4() {
    local set=$1 base=$2 file size
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<metalink xmlns="urn:ietf:params:xml:ns:metalink">'
    while read -r file size; do
        printf '  <file name="%s">\n    <size>%s</size>\n    <hash type="sha-256">%s</hash>\n' \
            "$file" "$size" "$(zeros_sha256 "$size")"
        printf '    <url>%s/%s</url>\n  </file>\n' "$base" "$file"
    done <"$work/$set.list"
    echo '</metalink>'
}

make_files() {
    mkdir -p "$work/www"
    local each=$((total_mb * 1024 * 1024 / streams)) sizes="" i
    # (a): K equal files, one per stream or connection.
    for ((i = 0; i < streams; i++)); do sizes+=" $each"; done
    make_set idle "$sizes"
    # (b): enough background work to outlast warm-up + foreground window at full link speed, twice over.
    local bg_each
    bg_each=$(awk -v b="$rate_bytes" -v t=$((warmup + fg_seconds)) -v k="$streams" \
        'BEGIN { printf "%.0f", 2 * b * t / k }')
    sizes=""
    for ((i = 0; i < streams; i++)); do sizes+=" $bg_each"; done
    make_set bg "$sizes"
    truncate -s 64G "$work/www/foreground.bin"
    # (c): 3K files with bounded-Pareto sizes (alpha 1.1, 64 KiB..total/3), scaled to total-mb, in a
    # shuffled order. A fixed LCG, not awk's rand(), so every awk gives the same sizes.
    sizes=$(awk -v n=$((3 * streams)) -v total=$((total_mb * 1024 * 1024)) 'BEGIN {
        s = 12345; a = 1.1; lo = 65536; hi = total / 3
        for (i = 1; i <= n; i++) {
            s = (s * 1103515245 + 12345) % 2147483648; u = s / 2147483648
            x[i] = lo / ((1 - u * (1 - (lo / hi) ^ a)) ^ (1 / a)); sum += x[i]
        }
        for (i = 1; i <= n; i++) { v = int(x[i] * total / sum); if (v < 4096) v = 4096; y[i] = v }
        for (i = n; i > 1; i--) {
            s = (s * 1103515245 + 12345) % 2147483648; j = 1 + int(s / 2147483648 * i)
            t = y[i]; y[i] = y[j]; y[j] = t
        }
        for (i = 1; i <= n; i++) printf " %d", y[i]
    }')
    make_set tail "$sizes"

    local set
    for set in idle bg tail; do
        write_meta4 "$set" "http://$server_ip:8080" >"$work/$set-h2.meta4"
        write_meta4 "$set" "http://$server_ip" >"$work/$set-h1.meta4"
    done
    write_meta4 tail "http://$server_ip:8081" >"$work/tail-nghttpd.meta4"
    # curl: one url/output pair per file, all on one HTTP/2 connection.
    for set in idle bg; do
        while read -r file _; do
            printf 'url = "https://%s:8443/%s"\noutput = "%s"\n' "$server_ip" "$file" "$file"
        done <"$work/$set.list" >"$work/$set-curl.conf"
    done
}

# ------------------------------------------------------------------------------------------- the servers
start_servers() {
    local n=$work/nginx
    mkdir -p "$n/tmp" "$work/logs" "$work/tls"
    # curl-h2 goes over TLS: curl 7.88 (Debian 12) fails reusing an h2c prior-knowledge connection for
    # parallel transfers ("Error in the HTTP2 framing layer", curl issue #10634, fixed in 8.0).
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=$server_ip" \
        -addext "subjectAltName=IP:$server_ip" -keyout "$work/tls/server.key" -out "$work/tls/server.pem" 2>/dev/null
    cat >"$n/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $n/nginx.pid;
error_log $n/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $n/tmp/body;
    proxy_temp_path $n/tmp/proxy;
    fastcgi_temp_path $n/tmp/fastcgi;
    uwsgi_temp_path $n/tmp/uwsgi;
    scgi_temp_path $n/tmp/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 10000;
    server { listen $server_ip:80; root $work/www; }
    server { listen $server_ip:8080 http2; root $work/www; }
    server {
        listen $server_ip:8443 ssl http2;
        ssl_certificate $work/tls/server.pem;
        ssl_certificate_key $work/tls/server.key;
        root $work/www;
    }
}
EOF
    in_s nginx -c "$n/nginx.conf" -p "$n" </dev/null >>"$work/logs/nginx.log" 2>&1 &
    pids+=($!)
    in_s nghttpd --no-tls --no-rfc7540-pri -d "$work/www" 8081 </dev/null >>"$work/logs/nghttpd.log" 2>&1 &
    pids+=($!)
    local i port
    for port in 80 8080 8081 8443; do
        for ((i = 0; i < 50; i++)); do
            if in_c bash -c "exec 3<>/dev/tcp/$server_ip/$port" 2>/dev/null; then break; fi
            sleep 0.1
        done
        [[ $i -lt 50 ]] || die "server on port $port did not come up; see $work/logs"
    done
}

# ------------------------------------------------------------------------------------------- the clients
now() { date +%s.%N; }

# Seconds from START to the last data written into DIR (the newest mtime): when the last byte landed,
# leaving out each client's final hash check and exit.
last_write() { # DIR START
    find "$1" -type f -printf '%T@\n' | sort -g | tail -n 1 | awk -v s="$2" '{ printf "%.3f", $1 - s }'
}
# Mean over the files of SET of (mtime - START), in seconds.
mean_completion() { # DIR SET START
    local dir=$1 set=$2 start=$3 file
    while read -r file _; do
        [[ -f $dir/$file ]] || die "$file missing in $dir: the download failed (see $work/logs)"
        stat -c '%.9Y' "$dir/$file"
    done <"$work/$set.list" | awk -v s="$start" '{ t += $1 - s; n++ } END { printf "%.3f", t / n }'
}
# Bytes the client namespace has received so far (all interfaces but lo): headers included.
# shellcheck disable=SC2016 # awk program, not shell
rx_bytes() { in_c awk 'NR > 2 && $1 != "lo:" { sub(/^[^:]*:/, ""); split($0, f, " "); s += f[1] } END { printf "%.0f\n", s }' /proc/net/dev; }
set_bytes() { awk '{ s += $2 } END { printf "%.0f\n", s }' "$work/$1.list"; }

# client_cmd CLIENT SET DIR : the command line of one client downloading SET into DIR.
client_cmd() {
    local client=$1 set=$2 dir=$3
    case $client in
    nicer) echo "$nicer fetch $work/$set-h2.meta4 --dir $dir --streams $streams --json" ;;
    nicer-nice) echo "$nicer fetch $work/$set-h2.meta4 --dir $dir --streams $streams --nice --json" ;;
    nicer-srpt) echo "$nicer fetch $work/$set-h2.meta4 --dir $dir --streams $streams --order srpt --json" ;;
    nicer-fifo) echo "$nicer fetch $work/$set-h2.meta4 --dir $dir --streams $streams --order fifo --json" ;;
    nicer-srpt-nghttpd) echo "$nicer fetch $work/$set-nghttpd.meta4 --dir $dir --streams $streams --order srpt --json" ;;
    nicer-fifo-nghttpd) echo "$nicer fetch $work/$set-nghttpd.meta4 --dir $dir --streams $streams --order fifo --json" ;;
    aria2c) echo "aria2c -M $work/$set-h1.meta4 -d $dir -j $streams -x 1 -s 1 --file-allocation=none" \
        "--enable-http-pipelining=false --allow-overwrite=true --auto-file-renaming=false" \
        "--summary-interval=0 --console-log-level=warn --download-result=hide" ;;
    curl-h2) echo "curl -s --http2 --cacert $work/tls/server.pem --parallel --parallel-max $streams --fail" \
        "--output-dir $dir --config $work/$set-curl.conf" ;;
    *) die "unknown client $client" ;;
    esac
}

# Nothing of an earlier measurement may still run in the client namespace when the next one starts.
quiet_client_namespace() {
    local pid left=""
    for pid in $(ip netns pids "$ns_c"); do
        left+=" $(ps -o comm= -p "$pid" 2>/dev/null || true)"
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [[ -n $left ]]; then log "warning: killed leftovers in the client namespace:$left"; fi
}

# Runs CLIENT on SET to completion; prints "seconds_to_last_byte mean_completion wall_seconds".
run_to_end() { # CLIENT SET
    local client=$1 set=$2 dir=$work/dl start end cmd
    quiet_client_namespace
    rm -rf "$dir" && mkdir -p "$dir"
    cmd=$(client_cmd "$client" "$set" "$dir")
    echo "\$ $cmd" >>"$work/logs/clients.log"
    start=$(now)
    # shellcheck disable=SC2086
    in_c $cmd </dev/null >>"$work/logs/$client.out" 2>>"$work/logs/clients.log" ||
        die "$client failed on $set (exit $?); see $work/logs/clients.log"
    end=$(now)
    echo "$(last_write "$dir" "$start") $(mean_completion "$dir" "$set" "$start") $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
    rm -rf "$dir"
}

# The foreground flow: one curl HTTP/1.1 download for fg_seconds; prints its bytes per second.
foreground() {
    in_c curl -s -o /dev/null --max-time "$fg_seconds" -w '%{size_download} %{time_total}\n' \
        "http://$server_ip/foreground.bin" 2>/dev/null | awk '{ printf "%.0f\n", $1 / $2 }' || true
}

# With CLIENT downloading SET in the background, the foreground's bytes per second and the background's
# during the foreground window: prints "fg_rate bg_rate". The background's is what the interface received
# less the foreground, with the link bytes scaled to payload (1448 of 1514 bytes per full frame).
contended() { # CLIENT
    local client=$1 dir=$work/dl cmd pid before after fg
    quiet_client_namespace
    rm -rf "$dir" && mkdir -p "$dir"
    cmd=$(client_cmd "$client" bg "$dir")
    echo "\$ $cmd &" >>"$work/logs/clients.log"
    # Not through in_c: a function would run in a subshell, and $! would not be the client's PID.
    # shellcheck disable=SC2086
    ip netns exec "$ns_c" $cmd </dev/null >>"$work/logs/$client.out" 2>>"$work/logs/clients.log" &
    pid=$!
    sleep "$warmup"
    kill -0 "$pid" 2>/dev/null || die "$client ended before the foreground started; see $work/logs/clients.log"
    before=$(rx_bytes)
    fg=$(foreground)
    after=$(rx_bytes)
    kill -0 "$pid" 2>/dev/null || log "warning: $client finished during the foreground window (more --total-mb?)"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    quiet_client_namespace
    rm -rf "$dir"
    awk -v f="$fg" -v b="$before" -v a="$after" -v t="$fg_seconds" \
        'BEGIN { bg = (a - b) / t * 1448 / 1514 - f; if (bg < 0) bg = 0; printf "%s %.0f\n", f, bg }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "n/a" }'; }
mib() { awk -v v="$1" 'BEGIN { if (v == v + 0) printf "%.1f", v / 1048576; else print "n/a" }'; }
mbps() { awk -v v="$1" 'BEGIN { if (v == v + 0) printf "%.2f", v * 8 / 1e6; else print "n/a" }'; }

# ---------------------------------------------------------------------------------------------- (d) BOINC
python=/usr/bin/python3
[[ -x $python ]] || python=python3
project=$root/tests/boinc/project/boinc_test_project.py
project_port=8090 rpc_port=31420 authenticator=nicertest_authenticator
# Copies of nicerd and nicer, taken at the start of (d), so that a rebuild of DIR during the run changes nothing.
nicerd_d=$work/bin/nicerd nicer_d=$work/bin/nicer

# boinccmd against the client of the current run, in the client namespace (never hangs on a frozen client).
boinc_rpc() {
    in_c timeout 10 boinccmd --host "localhost:$rpc_port" --passwd "$(cat "$d_dir/client/gui_rpc_auth.cfg")" "$@"
}
boinc_answers() { [[ -s $d_dir/client/gui_rpc_auth.cfg ]] && boinc_rpc --get_cc_status >/dev/null 2>&1; }
# nicerd's view of its BOINC client (`nicer boinc --json`), or {} while it does not answer.
nicer_boinc() { timeout 10 "$nicer_d" boinc --json 2>/dev/null || echo '{}'; }
# The nicerd on the session bus is this run's, and its BOINC client answers.
nicerd_boinc_running() {
    kill -0 "$d_nicerd" 2>/dev/null || die "(d) nicerd ended; see $work/logs/d-nicer-*.log"
    timeout 10 "$nicer_d" status --json 2>/dev/null | jq -e --arg d "$d_dir/client" '.workload | index($d)' >/dev/null &&
        [[ $(nicer_boinc | jq -r .state) == running ]]
}
# At least one of BOINC's downloads moves bytes.
boinc_downloading() { # MODE
    if [[ $1 == nicer ]]; then
        nicer_boinc | jq -e '[.transfers[]? | select((.upload | not) and .state == "active" and .bytes_done > 0)] | length > 0' >/dev/null
    else
        boinc_rpc --get_file_transfers 2>/dev/null | grep -q 'xfer active: yes'
    fi
}

# wait_until SECONDS WHAT COMMAND... : polls COMMAND every half second; dies naming WHAT after SECONDS.
wait_until() {
    local limit=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        [[ $SECONDS -lt $deadline ]] || die "(d) $what did not happen within ${limit}s; see $work/logs"
        sleep 0.5
    done
}

# The machine's idle CPU share over one second (/proc/stat).
cpu_idle_share() {
    local a b
    a=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); print (y[1] - x[1]) / (y[2] - x[2]) }'
}
# nicerd holds (freezes) its work, the BOINC client with its transfers, while the user's programs need every
# CPU: another build on the machine would stop BOINC for reasons that have nothing to do with the link. So each
# run waits (up to a minute) for the CPUs to be at least 80% idle; the held column shows what happened anyway.
wait_quiet_cpu() {
    local i
    for ((i = 0; i < 60; i++)); do
        [[ $(awk -v s="$(cpu_idle_share)" 'BEGIN { print (s >= 0.8) }') == 1 ]] && return 0
        if ((i % 10 == 0)); then log "(d) waiting for the CPUs to be idle (other load on the machine)"; fi
    done
    log "warning: the CPUs stayed busy for a minute; measuring anyway (see the held column)"
}

# BOINC's download connections (to the project's port) in the client namespace: "unread_bytes buffer_bytes",
# the data the kernel has received that the client has not read yet (Recv-Q) and the receive buffers' sizes
# (skmem rb, grown by TCP's receive-buffer autotuning), summed over the connections.
# shellcheck disable=SC2016 # awk program, not shell
boinc_sockets() {
    in_c ss -tnm "( dport = :$project_port )" | awk '
        $1 == "ESTAB" { q += $2 }
        match($0, /rb[0-9]+/) { b += substr($0, RSTART + 2, RLENGTH - 2) }
        END { printf "%.0f %.0f\n", q, b }'
}
# Every second until killed: "time rx_bytes state limit boinc_bytes unread_bytes buffer_bytes", where state
# and limit (nicer's max_down_rate, bytes/s) are nicerd's ("-" and 0 with BOINC's defaults), boinc_bytes the
# bytes BOINC's downloads have read so far (get_file_transfers), and the last two boinc_sockets'.
sample_boinc() { # MODE
    local mode=$1 json
    while :; do
        if [[ $mode == nicer ]]; then
            json=$(nicer_boinc)
            echo "$(now) $(rx_bytes) $(jq -r '[.state // "-", .max_down_rate // 0,
                ([.transfers[]? | select(.upload | not) | .bytes_done] | add // 0)] | map(tostring) | join(" ")' <<<"$json") $(boinc_sockets)"
        else
            echo "$(now) $(rx_bytes) - 0 $(boinc_rpc --get_file_transfers 2>/dev/null |
                awk '/bytes_xferred:/ { s += $2 } END { printf "%.0f", s }') $(boinc_sockets)"
        fi
        sleep 1
    done
}

# One run: the project server, a fresh BOINC client attached to it (MODE defaults: BOINC alone; nicer: under
# nicerd), BOINC's downloads under way for --boinc-warmup seconds, then the foreground. Prints
# "fg_rate boinc_before boinc_during limit_at_start limit_median limit_at_end held_polls polls buffers_at_start"
# (bytes/s; buffers: BOINC's receive buffers when the foreground starts, bytes).
boinc_run() { # MODE REP
    local mode=$1 rep=$2 url log trace t0 t1 t2 b0 b1 b2 fg attached
    log=$work/logs/d-$mode-$rep.log trace=$work/logs/d-$mode-$rep.trace
    quiet_client_namespace
    wait_quiet_cpu
    d_dir=$work/boinc-run
    rm -rf "$d_dir" && mkdir -p "$d_dir/project" "$d_dir/client" "$d_dir/nicerd/data"
    # Work units far larger than the run can move: no download ends, so no task starts computing, and the
    # CPUs stay free for the link's work.
    ip netns exec "$ns_s" "$python" "$project" --host "$server_ip" --port "$project_port" --dir "$d_dir/project" \
        --workunits 4 --input-bytes "$input_bytes" --input-content zeros --task-seconds 3600 \
        --url-file "$d_dir/url" -q </dev/null >/dev/null 2>>"$log" &
    d_server=$!
    wait_until 60 "the project server's start" test -s "$d_dir/url"
    url=$(cat "$d_dir/url")
    "$python" "$project" prepare-client --boinc-dir "$d_dir/client" --url "$url" --task-seconds 3600 \
        --client-config >>"$log" 2>&1 || die "(d) prepare-client failed; see $log"
    if [[ $mode == nicer ]]; then
        if timeout 10 "$nicer_d" status >/dev/null 2>&1; then
            die "(d) another nicerd answers on the session bus ($DBUS_SESSION_BUS_ADDRESS); stop it first"
        fi
        # nicerd in the client namespace (nsenter: only the network namespace; `ip netns exec` would also
        # remount /sys and hide the cgroups), so that it reads that namespace's /proc/net/dev and reaches the
        # client's GUI RPC on its loopback. Its units are started by the user manager, in the host's
        # namespace: the wrapper puts the client into the client namespace.
        XDG_STATE_HOME=$d_dir/nicerd XDG_CONFIG_HOME=$d_dir/nicerd XDG_DATA_HOME=$d_dir/nicerd/data \
            nsenter --net="/run/netns/$ns_c" "$nicerd_d" --instances 1 --slice "$slice" -- \
            ip netns exec "$ns_c" boinc --dir "$d_dir/client" --gui_rpc_port "$rpc_port" </dev/null >>"$log" 2>&1 &
        d_nicerd=$!
        wait_until 90 "nicerd's BOINC client answering" nicerd_boinc_running
        timeout 120 "$nicer_d" boinc attach "$url" "$authenticator" >>"$log" 2>&1 ||
            die "(d) nicer boinc attach failed; see $log"
    else
        ip netns exec "$ns_c" boinc --dir "$d_dir/client" --gui_rpc_port "$rpc_port" </dev/null >>"$log" 2>&1 &
        d_boinc=$!
        wait_until 60 "BOINC answering GUI RPC" boinc_answers
        boinc_rpc --project_attach "$url" "$authenticator" >>"$log" 2>&1 || die "(d) the attach failed; see $log"
    fi
    attached=$SECONDS
    wait_until 120 "BOINC's downloads" boinc_downloading "$mode"
    log "(d) rep $rep $mode: BOINC downloading $((SECONDS - attached)) s after the attach; foreground in ${boinc_warmup} s"
    sample_boinc "$mode" >"$trace" &
    d_sampler=$!
    sleep $((boinc_warmup - 5))
    t0=$(now) b0=$(rx_bytes)
    sleep 5
    t1=$(now) b1=$(rx_bytes)
    fg=$(foreground)
    t2=$(now) b2=$(rx_bytes)
    boinc_downloading "$mode" || log "warning: BOINC's downloads had stopped by the end of the window"
    kill "$d_sampler" 2>/dev/null || true
    wait "$d_sampler" 2>/dev/null || true
    d_sampler=""
    d_stop
    # Interface bytes scaled to payload (1448 of 1514 bytes per full frame), as in (b); the limits and the
    # held polls from the samples inside the window (the limit at its start: the last sample before it).
    awk -v f="$fg" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v b0="$b0" -v b1="$b1" -v b2="$b2" '
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n == 0 ? 0 : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
        }
        $1 < t1 { start = $4; buffers = $7 }
        $1 >= t1 && $1 <= t2 { n++; lim[n] = $4; last = $4; held += ($3 == "held") }
        END {
            before = (b1 - b0) / (t1 - t0) * 1448 / 1514
            during = (b2 - b1) / (t2 - t1) * 1448 / 1514 - f; if (during < 0) during = 0
            printf "%s %.0f %.0f %.0f %.0f %.0f %d %d %.0f\n", f, before, during, start, median(lim, n), last, held, n, buffers
        }' "$trace"
}

# ---------------------------------------------------------------------------------------------- the run
setup_link
make_files
start_servers
log "link: $rate (tbf burst $burst B, queue ${buffer_ms} ms), loss $loss%, $streams streams/connections, $reps reps; work in $work"

if [[ -n $hold ]]; then
    cat >&2 <<EOF
bench-net: holding. Client namespace $ns_c, server namespace $ns_s ($server_ip), work dir $work:
  ip netns exec $ns_c $nicer fetch $work/idle-h2.meta4 --dir /tmp/x --streams $streams --nice
  ip netns exec $ns_c curl -o /dev/null http://$server_ip/foreground.bin
Manifests: $work/{idle,bg,tail}-{h2,h1}.meta4, tail-nghttpd.meta4. Interrupt (kill $$) to clean up.
EOF
    # wait, unlike sleep, lets the trap run at once; the sleep is in pids so that the cleanup ends it too
    while :; do sleep 3600 & pids+=($!); wait $!; done
fi

report=$work/report.md
{
    echo "### Run $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "Link $rate (tbf, burst $burst B, queue limit ${buffer_ms} ms), loss $loss%, no added delay;" \
        "K = $streams; $reps repetitions (median); congestion control $cc; load average before:" \
        "$(cut -d' ' -f1-3 /proc/loadavg)."
    echo
} >"$report"

nicer_clients() { [[ -n $have_nicer ]] && printf '%s ' "$@"; return 0; }

if [[ $only == *a* ]]; then
    clients="$(nicer_clients nicer nicer-nice)aria2c curl-h2"
    bytes=$(set_bytes idle)
    declare -A tput=()
    for ((r = 1; r <= reps; r++)); do
        for c in $clients; do
            run_to_end "$c" idle >"$work/result"
            read -r secs _ <"$work/result"
            t=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.0f", b / s }')
            tput[$c]+="$t "
            log "(a) rep $r $c: $(mbps "$t") Mbit/s"
        done
    done
    {
        echo "#### (a) Idle link: throughput to the last byte, $((bytes / 1048576)) MiB in $streams equal files"
        echo
        echo "| client | median Mbit/s | runs (Mbit/s) | vs aria2c (K HTTP/1.1 connections) | vs curl-h2 |"
        echo "|---|---|---|---|---|"
        ma=$(echo "${tput[aria2c]}" | tr ' ' '\n' | grep . | median)
        mc=$(echo "${tput[curl-h2]}" | tr ' ' '\n' | grep . | median)
        for c in $clients; do
            m=$(echo "${tput[$c]}" | tr ' ' '\n' | grep . | median)
            runs=$(for v in ${tput[$c]}; do mbps "$v"; printf ' '; done)
            echo "| $c | $(mbps "$m") | ${runs% } | $(ratio "$m" "$ma") | $(ratio "$m" "$mc") |"
        done
        echo
    } >>"$report"
fi

if [[ $only == *b* ]]; then
    clients="$(nicer_clients nicer nicer-nice)aria2c curl-h2"
    declare -A fgr=() bgr=()
    solo=""
    for ((r = 1; r <= reps; r++)); do
        quiet_client_namespace
        foreground >"$work/result"
        read -r s <"$work/result"
        solo+="$s "
        log "(b) rep $r foreground alone: $(mbps "$s") Mbit/s"
        for c in $clients; do
            contended "$c" >"$work/result"
            read -r f b <"$work/result"
            fgr[$c]+="$f " bgr[$c]+="$b "
            log "(b) rep $r with $c: foreground $(mbps "$f") Mbit/s ($(ratio "$f" "$s") of alone), $c $(mbps "$b") Mbit/s"
        done
    done
    ms=$(echo "$solo" | tr ' ' '\n' | grep . | median)
    {
        echo "#### (b) A competing foreground download (curl, one HTTP/1.1 connection, ${fg_seconds} s, started ${warmup} s after the background client)"
        echo
        echo "Foreground alone: $(mbps "$ms") Mbit/s (median of: $(for v in $solo; do mbps "$v"; printf ' '; done| sed 's/ $//'))."
        echo
        echo "| background client | foreground Mbit/s | foreground kept (vs alone) | runs (kept) | background Mbit/s meanwhile |"
        echo "|---|---|---|---|---|"
        for c in $clients; do
            mf=$(echo "${fgr[$c]}" | tr ' ' '\n' | grep . | median)
            mb=$(echo "${bgr[$c]}" | tr ' ' '\n' | grep . | median)
            runs=$(for v in ${fgr[$c]}; do ratio "$v" "$ms"; printf ' '; done)
            echo "| $c | $(mbps "$mf") | $(ratio "$mf" "$ms") | ${runs% } | $(mbps "$mb") |"
        done
        echo
    } >>"$report"
fi

if [[ $only == *c* ]]; then
    if [[ -z $have_nicer ]]; then
        log "(c) needs nicer fetch: skipped"
    else
        clients="nicer-srpt nicer-fifo nicer-srpt-nghttpd nicer-fifo-nghttpd"
        declare -A mct=() last=()
        for ((r = 1; r <= reps; r++)); do
            for c in $clients; do
                run_to_end "$c" tail >"$work/result"
                read -r secs mean _ <"$work/result"
                mct[$c]+="$mean " last[$c]+="$secs "
                log "(c) rep $r $c: mean completion $mean s, last byte $secs s"
            done
        done
        {
            echo "#### (c) Heavy-tailed sizes: $(wc -l <"$work/tail.list") files, $(($(set_bytes tail) / 1048576)) MiB, bounded Pareto (alpha 1.1), $streams streams"
            echo
            echo "Sizes in manifest (FIFO) order, KiB: $(awk '{ printf "%d ", $2 / 1024 }' "$work/tail.list")"
            echo
            echo "| server | order | mean completion s | runs (s) | last byte s | SRPT / FIFO mean |"
            echo "|---|---|---|---|---|---|"
            for server in nginx nghttpd; do
                sfx=""; [[ $server == nghttpd ]] && sfx=-nghttpd
                msrpt=$(echo "${mct[nicer-srpt$sfx]}" | tr ' ' '\n' | grep . | median)
                mfifo=$(echo "${mct[nicer-fifo$sfx]}" | tr ' ' '\n' | grep . | median)
                for order in srpt fifo; do
                    c=nicer-$order$sfx
                    m=$(echo "${mct[$c]}" | tr ' ' '\n' | grep . | median)
                    l=$(echo "${last[$c]}" | tr ' ' '\n' | grep . | median)
                    rr=""; [[ $order == srpt ]] && rr=$(ratio "$msrpt" "$mfifo")
                    echo "| $server | $order | $m | ${mct[$c]% } | $l | $rr |"
                done
            done
            echo
        } >>"$report"
    fi
fi

if [[ $only == *d* ]]; then
    # Four work units, each larger than BOINC alone at full link speed can move in a run (from its first byte to
    # the end of the foreground window, plus 30 s): no download ends, so no task starts and none uploads.
    input_bytes=$(awk -v b="$rate_bytes" -v t=$((boinc_warmup + fg_seconds + 30)) \
        'BEGIN { m = 1048576; printf "%.0f", (int(b * t / m) + 1) * m }')
    modes=defaults
    if [[ ! -x $build/app/daemon/nicerd ]] || ! "$build/app/cli/nicer" boinc --help >/dev/null 2>&1; then
        log "(d) no nicerd or no 'nicer boinc' in $build (build the nicerd and nicer targets): the nicer row is skipped"
    else
        mkdir -p "$work/bin"
        cp "$build/app/daemon/nicerd" "$build/app/cli/nicer" "$work/bin/"
        if um_env=$("$root/tests/harness/user-manager.sh" start 2>"$work/logs/user-manager.log"); then
            eval "$um_env"
            grep -q 'already reachable' "$work/logs/user-manager.log" || um_started=1
            modes+=" nicer"
        else
            log "(d) no systemd user manager (see $work/logs/user-manager.log): the nicer row is skipped"
        fi
    fi
    declare -A dfg=() dbefore=() dduring=() dstart=() dmedian=() dend=() dheld=() dbuf=()
    dsolo=""
    for ((r = 1; r <= reps; r++)); do
        quiet_client_namespace
        foreground >"$work/result"
        read -r s <"$work/result"
        dsolo+="$s "
        log "(d) rep $r foreground alone: $(mbps "$s") Mbit/s"
        for m in $modes; do
            boinc_run "$m" "$r" >"$work/result"
            read -r f bb bd ls lm le h n buf <"$work/result"
            dfg[$m]+="$f " dbefore[$m]+="$bb " dduring[$m]+="$bd " dstart[$m]+="$ls " dmedian[$m]+="$lm " dend[$m]+="$le "
            dheld[$m]+="$h/$n " dbuf[$m]+="$buf "
            lim=""
            if [[ $m == nicer ]]; then lim=", nicer's limit $(mbps "$ls") -> $(mbps "$lm") (median) -> $(mbps "$le") Mbit/s, held $h of $n polls"; fi
            log "(d) rep $r BOINC $m: foreground $(mbps "$f") Mbit/s ($(ratio "$f" "$s") of alone); BOINC $(mbps "$bb") Mbit/s before," \
                "$(mbps "$bd") meanwhile, receive buffers $(mib "$buf") MiB at the start$lim"
        done
    done
    ms=$(echo "$dsolo" | tr ' ' '\n' | grep . | median)
    {
        echo "#### (d) BOINC's downloads and a competing foreground download (curl, one HTTP/1.1 connection, ${fg_seconds} s, started ${boinc_warmup} s after BOINC's downloads began)"
        echo
        echo "BOINC $(boinc --version | cut -d' ' -f1) downloads 4 work units of $((input_bytes / 1048576)) MiB from the local test project" \
            "(two transfers at a time, HTTP/1.1, zeros); \"before\" is BOINC's rate in the 5 s before the foreground starts, with the link to itself."
        echo
        echo "Foreground alone: $(mbps "$ms") Mbit/s (median of: $(for v in $dsolo; do mbps "$v"; printf ' '; done | sed 's/ $//'))."
        echo
        echo "| BOINC | foreground Mbit/s | foreground kept (vs alone) | runs (kept) | BOINC Mbit/s before | BOINC Mbit/s meanwhile | BOINC's receive buffers at the start, MiB (runs) | nicer's limit Mbit/s: at start, median, at end | held polls (runs) |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for m in $modes; do
            mf=$(echo "${dfg[$m]}" | tr ' ' '\n' | grep . | median)
            runs=$(for v in ${dfg[$m]}; do ratio "$v" "$ms"; printf ' '; done)
            mb=$(echo "${dbefore[$m]}" | tr ' ' '\n' | grep . | median)
            md=$(echo "${dduring[$m]}" | tr ' ' '\n' | grep . | median)
            if [[ $m == nicer ]]; then
                name="under nicer"
                lim="$(mbps "$(echo "${dstart[$m]}" | tr ' ' '\n' | grep . | median)"),"
                lim+=" $(mbps "$(echo "${dmedian[$m]}" | tr ' ' '\n' | grep . | median)"),"
                lim+=" $(mbps "$(echo "${dend[$m]}" | tr ' ' '\n' | grep . | median)")"
                held=${dheld[$m]% }
            else
                name="defaults" lim="none" held=""
            fi
            bufs=$(for v in ${dbuf[$m]}; do mib "$v"; printf ' '; done)
            echo "| $name | $(mbps "$mf") | $(ratio "$mf" "$ms") | ${runs% } | $(mbps "$mb") | $(mbps "$md") | ${bufs% } | $lim | $held |"
        done
        echo
    } >>"$report"
fi

cat "$report"
if [[ -n $out ]]; then cat "$report" >>"$out"; fi
