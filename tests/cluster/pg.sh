# A throwaway PostgreSQL for the cluster test and scripts/cluster-demo (sourced, bash).
# pg_start DIR: initdb + start in DIR (unix socket in DIR, no TCP); sets PG_CONNINFO.
# pg_down / pg_up: a clean stop and a start of that server (PG_DIR set); pg_stop: immediate.
# PostgreSQL refuses to run as root: as root it runs as the user `nobody`, which then owns DIR
# (DIR's parent must let it in).
PG_BINDIR=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
pg_as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
pg_start() {
  PG_DIR=$1
  mkdir -p "$PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown nobody "$PG_DIR"
  chmod 755 "$PG_DIR"
  pg_as "$PG_BINDIR/initdb" -D "$PG_DIR/data" -U cuzk --auth=trust -E UTF8 --no-sync \
    >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  pg_up || return 1
  PG_CONNINFO="host=$PG_DIR dbname=postgres user=cuzk"
  export PG_DIR PG_CONNINFO
}
pg_up() {
  pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 30 \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c fsync=off" start \
    >/dev/null || { cat "$PG_DIR/postgres.log" >&2; return 1; }
}
pg_down() {
  pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >/dev/null
}
pg_stop() {
  [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] &&
    pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1
  return 0
}
