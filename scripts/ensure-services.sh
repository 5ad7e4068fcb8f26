#!/usr/bin/env bash
# Makes sure the services the test suite talks to are up on this machine: PostgreSQL (127.0.0.1:5432,
# trust auth for local connections), NATS with JetStream (127.0.0.1:4222) and Redis (127.0.0.1:6379);
# and that Debian's Chromium is installed for the web console's browser tests (/usr/bin/chromium).
# A service that already answers is left alone. One that is installed but stopped is started with the
# same command the machine image uses. One that is missing is installed from Debian's packages.
set -euo pipefail

log() { printf 'ensure-services: %s\n' "$*" >&2; }
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else log "need root for: $*"; return 1; fi; }
wait_up() {
  for _ in $(seq 1 60); do up "$1" && return 0; sleep 0.5; done
  log "$2 did not come up on port $1"; return 1
}
apt_updated=0
install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  log "installing $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL
if ! up 5432; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    install postgresql
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    # Local trust auth, as on the project's machines (tests connect as postgres without a password).
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "/etc/postgresql/$version/main/pg_hba.conf"
    as_root sed -i -E 's/^(local\s+all\s+postgres\s+)\S+/\1trust/' "/etc/postgresql/$version/main/pg_hba.conf"
  fi
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start || true
  wait_up 5432 PostgreSQL
fi

# NATS with JetStream
if ! up 4222; then
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || install nats-server
  bin=$(command -v nats-server || echo /usr/sbin/nats-server)
  as_root mkdir -p /var/lib/nats-server
  log "starting NATS with JetStream"
  as_root start-stop-daemon --start --oknodo --background --exec "$bin" -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_up 4222 NATS
fi

# The nats-server binary itself: the dependency-failure tests run private servers they restart.
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || install nats-server

# Redis
if ! up 6379; then
  command -v redis-server >/dev/null || install redis-server
  as_root mkdir -p /var/lib/redis /var/log/redis
  log "starting Redis"
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_up 6379 Redis
fi
# Chromium, which the web console's end-to-end tests drive with playwright-core (issue #16)
if [ ! -x /usr/bin/chromium ]; then
  install chromium
fi

log "PostgreSQL, NATS (JetStream) and Redis are up; Chromium is installed"
