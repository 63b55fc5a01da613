# Helpers of the fleet tests (sourced after test/lib.sh): a ClickHouse
# server of our own, queries, a local HTTP receiver standing for Pyroscope
# and Parca.  Needs $tmp and fail().

# free_port: a TCP port nobody listens on now (bound, then released).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ch_query SQL: the answer of our ClickHouse (TabSeparated), status 1 on
# an error answer.
ch_query() {
	python3 - "$CH_URL" "$1" <<'PY'
import sys, urllib.request
try:
    r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/", data=sys.argv[2].encode()), timeout=60)
    sys.stdout.write(r.read().decode())
except Exception as e:
    sys.stderr.write(f"clickhouse: {e} {getattr(e, 'read', lambda: b'')().decode()[:300]}\n")
    sys.exit(1)
PY
}

ch_up() { [ "$(ch_query 'SELECT 1' 2>/dev/null)" = 1 ]; }

# start_clickhouse: Debian's clickhouse-server on free local ports with
# its data in $tmp/ch (as root, or as nobody if this one refuses root), a
# cluster "one_shard" of itself; CH_URL names it.  Fails when
# clickhouse-server is not installed (an oracle scripts/deps.sh installs).
start_clickhouse() {
	local d=$tmp/ch http tcp user=""
	need_cmd clickhouse-server clickhouse-server
	mkdir -p "$d"
	http=$(free_port)
	tcp=$(free_port)
	cp /etc/clickhouse-server/users.xml "$d/users.xml" 2>/dev/null ||
		printf '<?xml version="1.0"?>\n<yandex><profiles><default/></profiles><users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default/></quotas></yandex>\n' >"$d/users.xml"
	cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/err.log</errorlog><console>0</console></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <remote_servers><one_shard><shard><replica><host>127.0.0.1</host><port>$tcp</port></replica></shard></one_shard></remote_servers>
</yandex>
XML
	CH_URL=http://127.0.0.1:$http
	for attempt in root nobody; do
		if [ $attempt = nobody ]; then
			grep -qi 'root' "$d/stdout" "$d/err.log" 2>/dev/null || break
			chown -R nobody "$d" && chmod 755 "$tmp"
			user="runuser -u nobody --"
		fi
		$user clickhouse-server --config-file="$d/config.xml" >"$d/stdout" 2>&1 &
		CH_PID=$!
		if wait_until "$WAIT_S" ch_up_or_gone; then
			ch_up && return 0
		fi
	done
	fail "clickhouse-server did not start: $(tail -5 "$d/stdout" "$d/err.log" 2>/dev/null)"
}

ch_up_or_gone() { ch_up || ! kill -0 "$CH_PID" 2>/dev/null; }

stop_clickhouse() {
	[ -n "${CH_PID:-}" ] || return 0
	kill "$CH_PID" 2>/dev/null
	wait_until 30 eval '! kill -0 $CH_PID 2>/dev/null' || kill -9 "$CH_PID" 2>/dev/null
	wait "$CH_PID" 2>/dev/null
	CH_PID=
}

# start_receiver DIR [STATUS]: an HTTP server on a free port that keeps
# every request (DIR/N.json: method, path, headers; DIR/N.body) and
# answers STATUS (200); RECV_URL names it, RECV_PID is its process.
start_receiver() {
	local dir=$1 status=${2:-200}
	mkdir -p "$dir"
	rm -f "$dir/port"
	python3 - "$dir" "$status" <<'PY' &
import http.server, json, os, sys
d, status = sys.argv[1], int(sys.argv[2])
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n[0] += 1
        with open(os.path.join(d, "%06d.body" % n[0]), "wb") as f:
            f.write(body)
        with open(os.path.join(d, "%06d.json.tmp" % n[0]), "w") as f:
            json.dump({"path": self.path, "headers": dict(self.headers)}, f)
        os.rename(os.path.join(d, "%06d.json.tmp" % n[0]), os.path.join(d, "%06d.json" % n[0]))
        msg = b"" if status == 200 else b"receiver says no\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
s.serve_forever()
PY
	RECV_PID=$!
	wait_until "$WAIT_S" test -s "$dir/port" || fail "the receiver did not start"
	RECV_URL=http://127.0.0.1:$(cat "$dir/port")
}

stop_receiver() {
	[ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2>/dev/null && wait "$RECV_PID" 2>/dev/null
	RECV_PID=
}

# requests DIR: how many the receiver kept.
requests() { ls "$1" 2>/dev/null | grep -c '\.json$'; }
