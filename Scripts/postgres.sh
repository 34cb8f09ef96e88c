#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on a free loopback port, for the tests of the shared cache.
#
#   eval "$(bash Scripts/postgres.sh start)"     # exports STORECHAIN_POSTGRES_URL and STORECHAIN_POSTGRES_DIR
#   bash Scripts/postgres.sh stop "$STORECHAIN_POSTGRES_DIR"
#   bash Scripts/postgres.sh start --stop-with PID   # stops the cluster when process PID ends
#   bash Scripts/postgres.sh stop-server DIR; bash Scripts/postgres.sh start-server DIR   # a restart
#
# The cluster runs as an unprivileged user (`postgres` when this script runs as root), listens on
# 127.0.0.1 only, and asks for a password (scram-sha-256). Its folder lives under /tmp and is
# removed when it stops. Needs Debian's `postgresql` package (`.ci/run` installs it).
set -euo pipefail

bin=${POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "error: PostgreSQL's server programs are not installed (looked in /usr/lib/postgresql/*/bin);" \
        "install Debian's 'postgresql' package, or set POSTGRES_BIN to the folder holding initdb" >&2
    exit 1
fi

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

stop_cluster() {
    local dir=$1
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

# Starts the server of a cluster made by `start` (again, after `stop-server`).
start_server() {
    local dir=$1
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "$(cat "$dir/options")" start >/dev/null || {
        cat "$dir/server.log" >&2
        exit 1
    }
}

# Stops the cluster in $2 once process $1 has ended. It first closes every descriptor it inherited
# past the standard three: a caller that starts children from several threads (a test process) may
# have handed it the write end of another child's output pipe, and whoever reads that pipe to its
# end would then wait for this watcher, which waits for the caller to end (a whole test run hung so).
stop_when_gone() {
    trap '' HUP
    local fd
    for fd in /proc/$BASHPID/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    bash "$0" stop "$2"
}

case "${1:-}" in
start)
    stop_with=""
    if [ "${2:-}" = "--stop-with" ]; then stop_with=${3:?"--stop-with needs a process ID"}; fi
    dir=$(mktemp -d /tmp/storechain-postgres.XXXXXX)
    chmod 755 "$dir"
    password=storechain-test
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    printf '%s\n' "$password" >"$dir/password"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U storechain --pwfile="$dir/password" --auth=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    printf '%s\n' "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c max_connections=600" \
        >"$dir/options"
    start_server "$dir"
    if [ -n "$stop_with" ]; then
        # Detached from the caller's output, so a caller reading this script's output is not held.
        stop_when_gone "$stop_with" "$dir" </dev/null >/dev/null 2>&1 &
    fi
    echo "export STORECHAIN_POSTGRES_URL=postgres://storechain:$password@127.0.0.1:$port/postgres"
    echo "export STORECHAIN_POSTGRES_DIR=$dir"
    ;;
stop-server)
    # Stops the server but keeps the cluster, for tests of a database that goes away and comes back.
    as_owner "$bin/pg_ctl" -D "${2:?"stop-server needs the cluster's folder"}/data" -m fast -w stop >/dev/null
    ;;
start-server)
    start_server "${2:?"start-server needs the cluster's folder"}"
    ;;
stop)
    stop_cluster "${2:?"stop needs the cluster's folder (STORECHAIN_POSTGRES_DIR)"}"
    ;;
*)
    echo "usage: $0 start [--stop-with PID] | stop DIR | stop-server DIR | start-server DIR" >&2
    exit 2
    ;;
esac
