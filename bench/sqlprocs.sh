#!/usr/bin/env bash
# sqlprocs.sh: aggregate ops/s of 1 and of PROCS (default 4) `memtool exec`
# processes sharing one store, on one SQLite file and on one PostgreSQL
# database, on the mixed workload of bench/compare.sh. See bench/sql.md.
#
#   bench/sqlprocs.sh
#
# Each process works in a directory of its own of the one memory
# (/memories/pN/...: the workload's paths with that prefix), so that the
# processes share the store, its write lock and its tree, but not their
# files. A run's aggregate is the commands of all its processes divided by
# the time of the slowest; each is printed with the ratio PROCS / 1.
#
# Environment: RUNS (default 3), PROCS (4), SEED (1), OPS (1000), FILES
# (50), MEMTOOL_TEST_POSTGRES (a PostgreSQL URL; without it PostgreSQL is
# left out; .ci/postgres.sh gives one). Needs jq.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
runs=${RUNS:-3}
procs=${PROCS:-4}
scratch_build sqlprocs ./bench/scale
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-1000}" -files "${FILES:-50}" -reads 1 2>/dev/null
for p in $(seq 1 "$procs"); do
	# The workload under /memories/pN, after a create that makes pN.
	printf '{"kind":"create","input":{"command":"create","path":"/memories/p%d/.keep","file_text":""}}\n' "$p" >"$tmp/setup$p.jsonl"
	mkdir "$tmp/p$p"
	sed "s#\"/memories#\"/memories/p$p#g" "$tmp/mixed.jsonl" >"$tmp/p$p/mixed.jsonl"
done
echo "go: $(go version | cut -d' ' -f3-)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)  temp dir file system: $(df -PT "$tmp" | awk 'NR == 2 {print $2}')"

# aggregate STORE N: runs N processes on STORE at once and prints their
# aggregate ops/s on the mixed workload.
aggregate() {
	local store=$1 n=$2 pids=()
	for p in $(seq 1 "$n"); do
		"$tmp/bench" exec -memtool "$tmp/memtool" -store "$store" "$tmp/setup$p.jsonl" "$tmp/p$p/mixed.jsonl" >"$tmp/out$p.jsonl" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	for p in $(seq 1 "$n"); do cat "$tmp/out$p.jsonl"; done |
		jq -s '[.[] | select(.workload == "mixed")] | if any(.errors > 0) then error("a command failed") else (map(.ops) | add) / (map(.seconds) | max) end'
}

backends=(sqlite)
[[ -n ${MEMTOOL_TEST_POSTGRES:-} ]] && backends+=(postgres)
printf '%-9s %4s %10s %10s %7s\n' backend run "1 proc" "$procs procs" ratio
for backend in "${backends[@]}"; do
	for run in $(seq 1 "$runs"); do
		declare -A ops=()
		for n in 1 "$procs"; do
			case $backend in
			sqlite) store=sqlite://$tmp/run$run-$n.db ;;
			postgres) store=$("$tmp/scale" -new-schema "$MEMTOOL_TEST_POSTGRES") ;;
			esac
			ops[$n]=$(aggregate "$store" "$n")
			[[ $backend == postgres ]] && "$tmp/scale" -drop-schema "$store"
		done
		printf '%-9s %4d %10.0f %10.0f %6.2fx\n' "$backend" "$run" "${ops[1]}" "${ops[$procs]}" "$(echo "${ops[$procs]} / ${ops[1]}" | bc -l)"
		unset ops
	done
done
