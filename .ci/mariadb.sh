#!/usr/bin/env bash
# Starts a MariaDB server from Debian's packages for the tests that need a
# MySQL server (the mysql/jdbc lookup tables), on loopback with its data
# under /tmp, and prints the MYSQL_* variables that point the tests at it:
#   eval "$(.ci/mariadb.sh)"
# Without them the tests start an in-process go-mysql-server instead.
set -euo pipefail
if ! command -v mariadbd >/dev/null; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
fi
dir=$(mktemp -d /tmp/braid-mariadb.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mariadb-install-db --user=root --datadir="$dir/data" --auth-root-authentication-method=socket \
  --skip-test-db >"$dir/install.log" 2>&1
mariadbd --user=root --datadir="$dir/data" --socket="$dir/sock" --pid-file="$dir/pid" \
  --bind-address=127.0.0.1 --port="$port" --skip-log-bin --innodb-buffer-pool-size=32M \
  >"$dir/server.log" 2>&1 &
for _ in $(seq 1 100); do
  mariadb-admin --socket="$dir/sock" -u root ping >/dev/null 2>&1 && break
  sleep 0.1
done
mariadb --socket="$dir/sock" -u root -e \
  "CREATE USER 'braid'@'127.0.0.1' IDENTIFIED BY 'braid-ci'; GRANT ALL ON *.* TO 'braid'@'127.0.0.1';"
echo "export MYSQL_HOST=127.0.0.1 MYSQL_PORT=$port MYSQL_USER=braid MYSQL_PASSWORD=braid-ci MYSQL_PIDFILE=$dir/pid"
