#!/usr/bin/env bash
# startup.sh: the footprint of memtool: binary sizes, start-up time of
# `memtool exec` answering one view, and peak RSS of `memtool exec` on the
# mixed workload of bench/compare.sh. See bench/startup.md.
#
#   bench/startup.sh
#
# Environment: RUNS (start-ups per binary, default 50), RSS_RUNS (mixed
# workload runs per binary, default 3), SEED (1), OPS (2000), FILES (100),
# ALL=1 to measure the builds with every store (-tags gcs,azure) too.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${RUNS:-50}
rss_runs=${RSS_RUNS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtool-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

names=()
build() { # build NAME GO-BUILD-FLAGS...
	local name=$1
	shift
	(cd "$repo" && go build "$@" -o "$tmp/$name" ./cmd/memtool)
	names+=("$name")
}
# What `go install` gives; the same stripped; the release build of
# .goreleaser.yaml.
build default
build stripped -ldflags='-s -w'
build release -trimpath -tags=grpcnotrace -ldflags='-s -w'
if [[ ${ALL:-} == 1 ]]; then
	build all -tags=gcs,azure
	build all-release -trimpath -tags=grpcnotrace,gcs,azure -ldflags='-s -w'
fi
(cd "$repo" && go build -o "$tmp/bench" ./bench)

echo "go: $(go version | cut -d' ' -f3-)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== size (MB = 10^6 bytes)"
for n in "${names[@]}"; do
	printf '%-12s %6.1f MB\n' "$n" "$(($(stat -c %s "$tmp/$n") / 1000))e-3"
done

# Start-up: one `memtool exec` process answering one view of an empty
# directory store, from start to exit.
store=$tmp/store
input='{"command":"view","path":"/memories"}'
echo "$input" | "$tmp/default" exec --store "$store" >/dev/null # creates the store
echo
echo "== start-up: memtool exec answering one view ($runs runs each)"
echo "$input" >"$tmp/in"
if command -v hyperfine >/dev/null; then
	cmds=()
	for n in "${names[@]}"; do
		cmds+=(-n "$n" "$tmp/$n exec --store $store")
	done
	hyperfine -N --input "$tmp/in" --output null --warmup 5 --runs "$runs" --style basic "${cmds[@]}"
else
	# Binaries take turns, so that a change of load hits them alike; the
	# median of each is printed.
	for i in $(seq 1 "$runs"); do
		for n in "${names[@]}"; do
			start=$(date +%s%N)
			"$tmp/$n" exec --store "$store" <"$tmp/in" >/dev/null
			end=$(date +%s%N)
			echo $(((end - start) / 1000)) >>"$tmp/t.$n"
		done
	done
	for n in "${names[@]}"; do
		sort -n "$tmp/t.$n" | awk -v n="$n" '{t[NR] = $1} END {printf "%-12s median %6.2f ms  (min %.2f, max %.2f)\n", n, t[int((NR + 1) / 2)] / 1000, t[1] / 1000, t[NR] / 1000}'
	done
fi

# Peak RSS: `memtool exec` (wrapped in /usr/bin/time) on the mixed
# workload, each run on a fresh directory store.
echo
echo "== peak RSS: memtool exec on the mixed workload (${OPS:-2000} commands; max of $rss_runs runs)"
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads 1 >"$tmp/gen.log" 2>&1 || {
	cat "$tmp/gen.log" >&2
	exit 1
}
for n in "${names[@]}"; do
	printf '#!/bin/sh\nexec /usr/bin/time -f %%M -a -o %q %q "$@"\n' "$tmp/rss.$n" "$tmp/$n" >"$tmp/timed-$n"
	chmod +x "$tmp/timed-$n"
	for run in $(seq 1 "$rss_runs"); do
		"$tmp/bench" exec -memtool "$tmp/timed-$n" -store "$tmp/rss-$n-$run" -run "$run" "$tmp/mixed.jsonl" >/dev/null
	done
	sort -n "$tmp/rss.$n" | awk -v n="$n" '{k[NR] = $1} END {printf "%-12s %6.1f MiB peak RSS (runs: %d, min %.1f MiB)\n", n, k[NR] / 1024, NR, k[1] / 1024}'
done
