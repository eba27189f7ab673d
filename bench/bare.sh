#!/usr/bin/env bash
# bare.sh: read-only views through `memtool exec` against the bare exec
# loop (bench/bareexec), paired run by run on one store. See bench/bare.md.
#
#   bench/bare.sh
#   BASE=main bench/bare.sh     # also memtool as built at main, in the same rounds
#
# Environment: RUNS (rounds, default 10), SEED (1), OPS (2000), FILES (100),
# READS (2000), BASE (a git revision whose memtool joins the rounds).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
scratch_build bare ./bench/bareexec
bins=$tmp/memtool
if [[ -n ${BASE:-} ]]; then
	mkdir "$tmp/base-src"
	git -C "$repo" archive "$BASE" | tar -x -C "$tmp/base-src"
	(cd "$tmp/base-src" && go build -o "$tmp/memtool-base" ./cmd/memtool)
	bins=$tmp/memtool-base,$bins
fi

"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads "${READS:-2000}"
# The read-only workload runs on the state the mixed one leaves.
"$tmp/bench" exec -memtool "$tmp/memtool" -store "$tmp/store" "$tmp/mixed.jsonl" >/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/bench" bare -bare "$tmp/bareexec" -memtool "$bins" -store "$tmp/store" -runs "${RUNS:-10}" "$tmp/read-only.jsonl"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
