#!/usr/bin/env bash
# parallel.sh: how `memtool exec` overlaps writes on a directory store.
# See bench/parallel.md.
#
#   bench/parallel.sh
#
# (a) one turn of CALLS str_replace on CALLS files (one JSON array line)
#     against the same calls as CALLS lines, one process;
# (b) the mixed workload of bench/compare.sh through 1 process against
#     PROCS processes sharing one store.
#
# Environment: CALLS (default 64), ROUNDS (10), PROCS (4), RUNS (3),
# SEED (1), OPS (2000), FILES (100); TMPDIR picks the file system.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
scratch_build parallel ./bench/parallel
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads 1 2>/dev/null
echo "go: $(go version | cut -d' ' -f3-)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)  temp dir file system: $(df -PT "$tmp" | awk 'NR == 2 {print $2}')"

mkdir "$tmp/turn" "$tmp/procs"
"$tmp/parallel" turn -memtool "$tmp/memtool" -dir "$tmp/turn/store" -calls "${CALLS:-64}" -rounds "${ROUNDS:-10}"
"$tmp/parallel" procs -memtool "$tmp/memtool" -dir "$tmp/procs" -workload "$tmp/mixed.jsonl" -procs "${PROCS:-4}" -runs "${RUNS:-3}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
