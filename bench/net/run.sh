#!/usr/bin/env bash
# How nicer's downloads compare with the usual clients on a shaped link, side by side in one run:
#   (a) throughput on an idle link: nicer (1 connection, K HTTP/2 streams) vs aria2c (K HTTP/1.1
#       connections, same Metalink) and curl (K HTTP/2 streams multiplexed on one connection);
#   (b) the share a competing foreground download (one curl HTTP/1.1 flow) keeps, relative to its
#       throughput alone, while nicer, nicer --nice, aria2c or curl-h2 download in the background;
#   (c) mean completion time of heavy-tailed files with nicer --order srpt vs --order fifo.
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
#                         [--cc cubic] [--only abc] [--out FILE] [--keep] [--hold]
# --hold sets up the link, files and servers, prints how to reach them, and waits until interrupted.
# Needs root (namespaces, tc, nft), nginx, nghttpd, aria2c, curl, nft, and `nicer fetch` in DIR/app/cli
# (without it the nicer columns are skipped). Prints Markdown to stdout (and --out FILE); logs to stderr.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rate=100mbit reps=3 loss=0 build=$root/build streams=10 buffer_ms=50 fg_seconds=10 warmup=3 total_mb=100
cc=cubic only=abc out="" keep="" hold=""
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
for tool in ip tc nft nginx nghttpd aria2c curl openssl sha256sum awk; do
    command -v "$tool" >/dev/null || die "'$tool' is missing: apt-get install iproute2 nftables nginx-light nghttp2-server aria2 curl"
done
[[ $rate =~ ^[0-9]+(k|m|g)bit$ ]] || die "--rate '$rate' must look like 20mbit, 100mbit or 1gbit"
[[ $loss =~ ^[0-9]+$ && $loss -lt 100 ]] || die "--loss '$loss' must be a whole percentage below 100"
[[ $streams =~ ^[1-9][0-9]*$ ]] || die "--streams '$streams' must be a positive number"
[[ $only =~ ^[abc]+$ ]] || die "--only '$only' must be made of a, b and c"

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
cleanup() {
    local pid
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
mbps() { awk -v v="$1" 'BEGIN { if (v == v + 0) printf "%.2f", v * 8 / 1e6; else print "n/a" }'; }

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
    while :; do sleep 3600 & wait $!; done # wait, unlike sleep, lets the trap run at once
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

cat "$report"
if [[ -n $out ]]; then cat "$report" >>"$out"; fi
