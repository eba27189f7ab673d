#!/usr/bin/env bash
# Makes sure the local PostgreSQL server is up, creates a scratch database
# for the pgstore and memtool tests, and gives its URL:
#
#   source .ci/postgres.sh     exports MEMTOOL_TEST_POSTGRES
#   .ci/postgres.sh            prints the export line
#
# Sourcing it changes nothing else in the caller's shell: the work runs in
# a bash process of its own, so the caller's options (set -e, -u,
# pipefail...), variables and functions stay as they were. Without a
# server it says so on stderr, returns non-zero and exports nothing.
#
# Each run gets a database of its own, memtool_test_<time>_<pid>, so that
# runs at the same time on one server never drop each other's; the scratch
# databases of runs more than a day old are dropped. MEMTOOL_TEST_DB names
# the database instead (it is dropped and created anew). PGHOST, PGPORT and
# PGUSER override the server's defaults.

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
	if __memtool_test_postgres=$("$BASH" "${BASH_SOURCE[0]}" --url); then
		export MEMTOOL_TEST_POSTGRES=$__memtool_test_postgres
		unset -v __memtool_test_postgres
		return 0
	fi
	unset -v __memtool_test_postgres
	return 1
fi

set -euo pipefail

pg_host=${PGHOST:-127.0.0.1}
pg_port=${PGPORT:-5432}
pg_user=${PGUSER:-postgres}
now=$(date +%s)
pg_db=${MEMTOOL_TEST_DB:-memtool_test_${now}_$$}

pg_ready() { pg_isready -q -h "$pg_host" -p "$pg_port"; }

if ! pg_ready; then
	if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
		for version in $(ls /etc/postgresql); do
			pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 || true
		done
	fi
	for _ in $(seq 1 60); do
		pg_ready && break
		sleep 0.5
	done
	pg_ready || { echo "postgres.sh: no PostgreSQL server on $pg_host:$pg_port" >&2; exit 1; }
fi

pg() {
	PGOPTIONS="-c client_min_messages=warning" psql -q -X -v ON_ERROR_STOP=1 \
		-h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres "$@"
}

# The scratch databases of earlier runs, aged by the time in their names.
for old in $(pg -At -c "SELECT datname FROM pg_database WHERE datname ~ '^memtool_test_[0-9]+_[0-9]+\$'"); do
	born=${old#memtool_test_}
	born=${born%_*}
	if ((now - born > 86400)); then
		pg -c "DROP DATABASE IF EXISTS \"$old\" WITH (FORCE)" >&2
	fi
done
if [[ -n ${MEMTOOL_TEST_DB:-} ]]; then
	pg -c "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" >&2
fi
pg -c "CREATE DATABASE \"$pg_db\"" >&2

url="postgres://$pg_user@$pg_host:$pg_port/$pg_db?sslmode=disable"
if [[ ${1:-} == --url ]]; then
	echo "$url"
else
	echo "export MEMTOOL_TEST_POSTGRES='$url'"
fi
