#!/usr/bin/env bash
# mixed.sh: ops/s of `memtool exec` on each backend (a directory, SQLite,
# PostgreSQL) on the mixed and read-only workloads of bench/compare.sh.
# See bench/scale/README.md.
#
#   bench/scale/mixed.sh
#
# Environment: RUNS (default 3), SEED (1), OPS (2000), FILES (100),
# READS (2000), MEMTOOL_TEST_POSTGRES (a PostgreSQL URL; without it the
# postgres backend is left out; .ci/postgres.sh gives one).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scratch.sh"
runs=${RUNS:-3}
scratch_build mixed ./bench/scale
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads "${READS:-2000}"
echo "go: $(go version | cut -d' ' -f3-)  cpus: $(nproc)  temp dir file system: $(df -PT "$tmp" | awk 'NR == 2 {print $2}')"

backends=(dir sqlite)
[[ -n ${MEMTOOL_TEST_POSTGRES:-} ]] && backends+=(postgres)
reports=()
for backend in "${backends[@]}"; do
	: >"$tmp/$backend.jsonl"
	for run in $(seq 1 "$runs"); do
		case $backend in
		dir) store=$tmp/run$run-dir ;;
		sqlite) store=sqlite://$tmp/run$run.db ;;
		postgres) store=$("$tmp/scale" -new-schema "$MEMTOOL_TEST_POSTGRES") ;;
		esac
		"$tmp/bench" exec -memtool "$tmp/memtool" -store "$store" -run "$run" \
			"$tmp/mixed.jsonl" "$tmp/read-only.jsonl" >>"$tmp/$backend.jsonl"
		[[ $backend == postgres ]] && "$tmp/scale" -drop-schema "$store"
	done
	reports+=("$backend=$tmp/$backend.jsonl")
done
"$tmp/scale" -report-mixed "${reports[@]}"
