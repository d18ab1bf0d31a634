#!/usr/bin/env bash
# pg.sh: a throwaway PostgreSQL server for conform's PostgreSQL store tests.
#
#   scripts/pg.sh start   start a cluster (or reuse the running one) and print
#                         `export CONFORM_PG_URL=...`
#   scripts/pg.sh env     print the export line of the running cluster
#   scripts/pg.sh stop    stop the cluster (pg_ctl -m immediate), remove its dir
#
#   eval "$(scripts/pg.sh start)" && go test ./stores/postgres/
#   . scripts/pg.sh start           # sourced: exports CONFORM_PG_URL here
#   . scripts/pg.sh stop            # sourced: also unsets it
#
# Sourced without a command it starts. Everything but the export line goes to
# stderr. The cluster lives in a fresh temp dir, listens on 127.0.0.1 only, on
# a free port, with trust auth, and has a database named `conform`. It runs
# with fsync=off (a throwaway server is never crash-tested; the stores'
# durability is the server's default settings' business) and room for 300
# connections. PostgreSQL is installed with apt-get when no initdb/pg_ctl is
# found on PATH or under /usr/lib/postgresql/*/bin. As root, the server runs as the `postgres` system
# user (created when missing), since initdb refuses root.
#
# State (the cluster's dir and port) is kept in $CONFORM_PG_STATE, by default
# ${TMPDIR:-/tmp}/conform-pg.state, so start, env and stop are idempotent:
# start reuses a live cluster and replaces a dead one; stop of nothing is a
# no-op.

_cpg_state() { printf '%s\n' "${CONFORM_PG_STATE:-${TMPDIR:-/tmp}/conform-pg.state}"; }

_cpg_log() { printf 'pg.sh: %s\n' "$*" >&2; }

# _cpg_bindir prints the directory that holds initdb, pg_ctl and pg_isready.
_cpg_bindir() {
	local p d
	if p=$(command -v pg_ctl 2>/dev/null) && [ -n "$p" ]; then
		d=$(dirname "$(readlink -f "$p")")
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			printf '%s\n' "$d"
			return 0
		fi
	fi
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
		printf '%s\n' "$d"
		return 0
	fi
	return 1
}

_cpg_install() {
	local sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			_cpg_log "PostgreSQL is missing and installing it needs root (or sudo)"
			return 1
		fi
		sudo="sudo"
	fi
	_cpg_log "installing PostgreSQL with apt-get"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update >&2 &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
}

# _cpg_user prints the user the server runs as: postgres when we are root.
_cpg_user() {
	if [ "$(id -u)" -ne 0 ]; then
		id -un
		return 0
	fi
	if ! id postgres >/dev/null 2>&1; then
		_cpg_log "creating the postgres system user"
		if command -v useradd >/dev/null 2>&1; then
			useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/sh postgres >&2 || return 1
		elif command -v adduser >/dev/null 2>&1; then
			adduser --system --group --home /var/lib/postgresql --shell /bin/sh postgres >&2 || return 1
		else
			_cpg_log "cannot create the postgres user: no useradd nor adduser"
			return 1
		fi
	fi
	printf 'postgres\n'
}

# _cpg_as USER CMD ARGS... runs a command as USER (as ourselves when we are USER).
_cpg_as() {
	local user=$1
	shift
	# fd 9 (the state lock) is closed for the child: a server started
	# here must not inherit, and so hold, the lock.
	if [ "$(id -un)" = "$user" ]; then
		"$@" 9>&-
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u "$user" -- "$@" 9>&-
	else
		su "$user" -s /bin/sh -c "$(printf '%q ' "$@")" 9>&-
	fi
}

# _cpg_port_free PORT: nothing listens on 127.0.0.1:PORT.
_cpg_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_cpg_url() { printf 'postgres://postgres@127.0.0.1:%s/conform?sslmode=disable\n' "$1"; }

# _cpg_alive PORT: a server accepts connections on PORT.
_cpg_alive() {
	local bin
	bin=$(_cpg_bindir) || return 1
	"$bin/pg_isready" -q -h 127.0.0.1 -p "$1" -U postgres -d postgres -t 2 >/dev/null 2>&1
}

# _cpg_read_state sets _cpg_dir and _cpg_port from the state file.
_cpg_read_state() {
	local f
	f=$(_cpg_state)
	_cpg_dir=""
	_cpg_port=""
	[ -f "$f" ] || return 1
	_cpg_dir=$(sed -n 's/^dir=//p' "$f")
	_cpg_port=$(sed -n 's/^port=//p' "$f")
	[ -n "$_cpg_dir" ] && [ -n "$_cpg_port" ]
}

_cpg_export() {
	CONFORM_PG_URL=$(_cpg_url "$1")
	export CONFORM_PG_URL
	printf "export CONFORM_PG_URL='%s'\n" "$CONFORM_PG_URL"
}

_cpg_start() {
	local bin user dir port tries ok i
	if _cpg_read_state; then
		if _cpg_alive "$_cpg_port"; then
			_cpg_log "reusing the cluster in $_cpg_dir on port $_cpg_port"
			_cpg_export "$_cpg_port"
			return 0
		fi
		_cpg_log "the recorded cluster in $_cpg_dir is not running; replacing it"
		_cpg_stop || return 1
	fi
	if ! bin=$(_cpg_bindir); then
		_cpg_install || return 1
		bin=$(_cpg_bindir) || {
			_cpg_log "no initdb/pg_ctl found after installing PostgreSQL"
			return 1
		}
	fi
	user=$(_cpg_user) || return 1
	dir=$(mktemp -d "${TMPDIR:-/tmp}/conform-pg.XXXXXX") || return 1
	chmod 0700 "$dir" && chown "$user" "$dir" || return 1
	_cpg_log "initdb in $dir as $user ($bin)"
	if ! _cpg_as "$user" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust \
		-E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		rm -rf "$dir"
		return 1
	fi
	ok=""
	for tries in 1 2 3 4 5 6 7 8; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		_cpg_port_free "$port" || continue
		if _cpg_as "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c full_page_writes=off" \
			start >&2; then
			ok=1
			break
		fi
		_cpg_log "start on port $port failed (try $tries)"
	done
	if [ -z "$ok" ]; then
		tail -n 20 "$dir/server.log" >&2 2>/dev/null
		rm -rf "$dir"
		return 1
	fi
	printf 'dir=%s\nport=%s\n' "$dir" "$port" >"$(_cpg_state)" || return 1
	ok=""
	for i in $(seq 1 60); do
		if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 1 >/dev/null 2>&1; then
			ok=1
			break
		fi
		sleep 0.5
	done
	if [ -z "$ok" ]; then
		_cpg_log "the server on port $port does not accept connections"
		_cpg_stop
		return 1
	fi
	if ! "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c 'CREATE DATABASE conform' >&2; then
		_cpg_stop
		return 1
	fi
	_cpg_log "started on 127.0.0.1:$port (dir $dir)"
	_cpg_export "$port"
}

_cpg_stop() {
	local bin user
	if ! _cpg_read_state; then
		_cpg_log "no cluster recorded; nothing to stop"
		unset CONFORM_PG_URL
		return 0
	fi
	if [ -d "$_cpg_dir/data" ] && bin=$(_cpg_bindir) && user=$(_cpg_user); then
		_cpg_as "$user" "$bin/pg_ctl" -D "$_cpg_dir/data" -m immediate stop >&2 2>/dev/null ||
			_cpg_log "pg_ctl stop: the server was not running"
	fi
	case "$_cpg_dir" in
	*/conform-pg.*) rm -rf "$_cpg_dir" ;;
	*) _cpg_log "not removing unexpected dir $_cpg_dir" ;;
	esac
	rm -f "$(_cpg_state)"
	unset CONFORM_PG_URL
	_cpg_log "stopped"
}

_cpg_env() {
	if _cpg_read_state && _cpg_alive "$_cpg_port"; then
		_cpg_export "$_cpg_port"
		return 0
	fi
	_cpg_log "no running cluster; run: scripts/pg.sh start"
	return 1
}

# _cpg_main CMD: runs one command under an exclusive lock on the state file
# (held on fd 9), when flock is available, so concurrent starts share one
# cluster.
_cpg_main() {
	local cmd=${1:-start} rc lock
	case "$cmd" in
	start | stop | env) ;;
	*)
		_cpg_log "usage: pg.sh start|stop|env"
		return 2
		;;
	esac
	lock="$(_cpg_state).lock"
	if command -v flock >/dev/null 2>&1 && exec 9>"$lock"; then
		flock 9
		"_cpg_$cmd"
		rc=$?
		exec 9>&-
		return $rc
	fi
	"_cpg_$cmd"
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
	_cpg_main "$@"
else
	_cpg_main "$@"
	exit $?
fi
