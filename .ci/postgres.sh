#!/usr/bin/env bash
# Makes sure the local PostgreSQL server is up, creates a scratch database
# for the pgstore and memtool tests, and gives its URL:
#
#   source .ci/postgres.sh     exports MEMTOOL_TEST_POSTGRES
#   .ci/postgres.sh            prints the export line
#
# PGHOST, PGPORT, PGUSER and MEMTOOL_TEST_DB override the defaults.
set -euo pipefail

pg_host=${PGHOST:-127.0.0.1}
pg_port=${PGPORT:-5432}
pg_user=${PGUSER:-postgres}
pg_db=${MEMTOOL_TEST_DB:-memtool_test}

pg_ready() { pg_isready -q -h "$pg_host" -p "$pg_port"; }

if ! pg_ready; then
	if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
		for version in $(ls /etc/postgresql); do
			pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
		done
	fi
	for _ in $(seq 1 60); do
		pg_ready && break
		sleep 0.5
	done
	pg_ready || { echo "postgres.sh: no PostgreSQL server on $pg_host:$pg_port" >&2; exit 1; }
fi

PGOPTIONS="-c client_min_messages=warning" psql -q -v ON_ERROR_STOP=1 -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres \
	-c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" -c "CREATE DATABASE $pg_db" >&2

url="postgres://$pg_user@$pg_host:$pg_port/$pg_db?sslmode=disable"
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
	export MEMTOOL_TEST_POSTGRES="$url"
else
	echo "export MEMTOOL_TEST_POSTGRES='$url'"
fi
