#!/bin/bash
# PostgreSQL + pgbench for `scripts/capture-app` (real-application validation cases).
#   pg.sh init            create the cluster and a scale-$SCALE pgbench database (once,
#                         outside any memory cgroup; capture-app evicts its pages after)
#   pg.sh run MODE SECS   start the server, run pgbench MODE (`-S` select-only, `tpcb`
#                         the default TPC-B-like script) for SECS seconds, stop it. Run
#                         inside the memory cgroup, so the server is charged to it.
# Settings (env): PGD data dir, SCALE (30: a 856 MB data directory with its WAL),
# SB shared_buffers (32MB), CLIENTS (4), PG bin dir PGBIN (/usr/local/bin), FSYNC (off:
# no fsync, no synchronous commit, no sync_file_range; on: PostgreSQL's defaults, a WAL
# fdatasync per commit and sync_file_range writeback of data and WAL, which capture-app
# records as ext4_writepages events).
set -e
PGD=${PGD:-/var/tmp/mmsim-realapp/pg}
SOCK=${SOCK:-/var/tmp/mmsim-realapp/sock}
PGBIN=${PGBIN:-/usr/local/bin}
SCALE=${SCALE:-30}
SB=${SB:-32MB}
CLIENTS=${CLIENTS:-4}
PORT=54329
FSYNC=${FSYNC:-off}
OPTS="-c listen_addresses='' -c unix_socket_directories=$SOCK -c port=$PORT -c shared_buffers=$SB -c fsync=$FSYNC -c synchronous_commit=$FSYNC -c autovacuum=off -c max_wal_size=4GB -c checkpoint_timeout=1h"
as_pg() { su postgres -s /bin/bash -c "$1"; }
start() { mkdir -p "$SOCK"; chown postgres "$SOCK"; as_pg "$PGBIN/pg_ctl -D $PGD -w -o \"$OPTS\" -l $PGD/../log start" >/dev/null; }
stop() { as_pg "$PGBIN/pg_ctl -D $PGD -w -m fast stop" >/dev/null; }
case "$1" in
init)
  mkdir -p "$(dirname "$PGD")"; chown postgres "$(dirname "$PGD")"
  [ -d "$PGD" ] || as_pg "$PGBIN/initdb -D $PGD -A trust" >/dev/null
  start
  as_pg "pgbench -h $SOCK -p $PORT -i -q -s $SCALE postgres" 2>&1 | tail -1
  as_pg "psql -h $SOCK -p $PORT -c checkpoint postgres" >/dev/null
  stop ;;
run)
  MODE=$2; SECS=${3:-10}
  [ "$MODE" = tpcb ] && MODE=""
  start
  trap stop EXIT
  as_pg "pgbench -h $SOCK -p $PORT -c $CLIENTS -j 2 -T $SECS $MODE postgres" 2>&1 | grep -E '^(tps|number of transactions actually)' | tr '\n' ' '
  echo ;;
*) echo "usage: pg.sh init | run MODE SECS" >&2; exit 2 ;;
esac
