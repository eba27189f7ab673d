#!/usr/bin/env bash
# serve.sh: memtool serve under load over loopback, 64 clients on the mixed
# workload, on memstore, a directory, SQLite and PostgreSQL, each beside
# one memtool exec process running as many commands on the same store,
# in the clients' interleaved order (and the ratio of their CPU times per
# command); the clients share one
# tenant, and for a directory and PostgreSQL also each have their own
# (writes to one tenant take turns there). See docs/serve.md.
#
#   bench/serve.sh
#
# Environment: CLIENTS (default 64), DURATION (20s), SEED (1), OPS (300
# per client), FILES (20); MEMTOOL_BENCH_POSTGRES, a postgres:// URL of an
# empty database or schema (default $MEMTOOL_TEST_POSTGRES; skipped if
# neither is set); TMPDIR picks the file system.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
scratch_build serve ./bench/serve ./bench/bareserve
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-300}" -files "${FILES:-20}" -reads 1 2>/dev/null
echo "go: $(go version | cut -d' ' -f3-)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {
	"$tmp/serve" -memtool "$tmp/memtool" -workload "$tmp/mixed.jsonl" -clients "${CLIENTS:-64}" -duration "${DURATION:-20s}" "$@"
}
run -label memstore -store mem: -keys "sqlite://$tmp/keys.db" -exec
# The floor: a bare Go HTTP server around the same engine (bench/bareserve).
run -label bare-http -store mem: -memtool "$tmp/bareserve"
run -label directory -store "$tmp/dir" -exec
run -label directory -store "$tmp/dir64" -tenants 64
run -label sqlite -store "sqlite://$tmp/store.db" -exec
pg=${MEMTOOL_BENCH_POSTGRES:-${MEMTOOL_TEST_POSTGRES:-}}
if [[ -n $pg ]]; then
	run -label postgres -store "$pg" -exec
	run -label postgres -store "$pg" -tenants 64
else
	echo "postgres: skipped (set MEMTOOL_BENCH_POSTGRES)"
fi
# What the server adds per command in process (no network): its handler
# beside the engine alone, on the same command, alternated three times.
(cd "$repo" && go test -c -o "$tmp/server.test" ./server/)
for _ in 1 2 3; do
	"$tmp/server.test" -test.run '^$' -test.bench BenchmarkOverhead -test.benchtime 20000x -test.benchmem | grep '^Benchmark'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
