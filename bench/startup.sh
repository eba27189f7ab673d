#!/usr/bin/env bash
# startup.sh: the footprint of memtool: binary sizes, start-up time of
# `memtool exec` answering one view, package initialisation, and peak RSS
# of `memtool exec` on the mixed workload of bench/compare.sh. See
# bench/startup.md.
#
#   bench/startup.sh
#   BASE=main bench/startup.sh     # also memtool as built at main, paired
#
# Environment: RUNS (start-ups per binary, default 50), INIT_RUNS (runs
# under GODEBUG=inittrace=1, default 30; 0 skips), RSS_RUNS (mixed
# workload runs per binary, default 3; 0 skips), SEED (1), OPS (2000),
# FILES (100), BASE (a git revision: its default build joins the
# comparison as "base"), ALL=1 to measure the builds with every store
# (-tags gcs,azure) too.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
runs=${RUNS:-50}
init_runs=${INIT_RUNS:-30}
rss_runs=${RSS_RUNS:-3}
scratch startup

names=()
# install NAME FILE: the binary joins the comparison under NAME. It is
# copied, not moved: how a file came to be in the page cache changes how
# fast it starts (a binary just written by the linker started about 10 %
# slower than a copy of it, in paired runs), so every binary measured is
# a copy, as `go install` and an unpacked release make one.
install() {
	cp "$2" "$tmp/$1"
	names+=("$1")
}
build() { # build NAME GO-BUILD-FLAGS...
	local name=$1
	shift
	(cd "$repo" && go build "$@" -o "$tmp/build.$name" ./cmd/memtool)
	install "$name" "$tmp/build.$name"
}

# The floor: a Go program that reads one line and answers it, built by
# the same go command. What memtool takes beyond it is memtool's own
# start-up; the ratio to it compares runs on machines of other speeds.
mkdir "$tmp/floor-src"
cat >"$tmp/floor-src/main.go" <<'EOF'
package main

import (
	"bufio"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Scan()
	os.Stdout.WriteString(`{"is_error":false,"content":"floor"}` + "\n")
}
EOF
printf 'module floor\n\ngo 1.21\n' >"$tmp/floor-src/go.mod"
(cd "$tmp/floor-src" && go build -o "$tmp/build.floor" .)
install floor "$tmp/build.floor"

# What `go install` gives; the same stripped; the release build of
# .goreleaser.yaml (static, stripped, -trimpath).
build default
build stripped -ldflags='-s -w'
CGO_ENABLED=0 build release -trimpath -tags=grpcnotrace,claude -ldflags='-s -w'
if [[ ${ALL:-} == 1 ]]; then
	build all -tags=gcs,azure
	CGO_ENABLED=0 build all-release -trimpath -tags=grpcnotrace,claude,gcs,azure -ldflags='-s -w'
fi
if [[ -n ${BASE:-} ]]; then
	mkdir "$tmp/base-src"
	git -C "$repo" archive "$BASE" | tar -x -C "$tmp/base-src"
	(cd "$tmp/base-src" && go build -o "$tmp/build.base" ./cmd/memtool)
	install base "$tmp/build.base"
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
	# The binaries take turns, so that a change of load hits them alike.
	# Bash's EPOCHREALTIME reads the clock without starting a process
	# (date(1) would add its own start-up to every run).
	for n in "${names[@]}"; do # warm up
		"$tmp/$n" exec --store "$store" <"$tmp/in" >/dev/null
	done
	for i in $(seq 1 "$runs"); do
		for n in "${names[@]}"; do
			start=$EPOCHREALTIME
			"$tmp/$n" exec --store "$store" <"$tmp/in" >/dev/null
			end=$EPOCHREALTIME
			echo $((${end/[.,]/} - ${start/[.,]/})) >>"$tmp/t.$n"
		done
	done
	floor=$(sort -n "$tmp/t.floor" | awk '{t[NR] = $1} END {print t[int((NR + 1) / 2)]}')
	for n in "${names[@]}"; do
		sort -n "$tmp/t.$n" | awk -v n="$n" -v floor="$floor" '{t[NR] = $1} END {
			m = t[int((NR + 1) / 2)]
			printf "%-12s median %6.2f ms  (min %.2f, p90 %.2f)  %4.1fx the floor, %+.2f ms\n", n, m / 1000, t[1] / 1000, t[int(NR * 0.9 + 0.5)] / 1000, m / floor, (m - floor) / 1000
		}'
	done
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Package initialisation of the default build: GODEBUG=inittrace=1 of the
# same command, the total per run and the median of each package.
if ((init_runs > 0)); then
	echo
	echo "== package initialisation, default build (GODEBUG=inittrace=1, $init_runs runs; ms and bytes allocated)"
	for i in $(seq 1 "$init_runs"); do
		GODEBUG=inittrace=1 "$tmp/default" exec --store "$store" <"$tmp/in" 2>&1 >/dev/null |
			awk -v r="$i" '$1 == "init" {print r, $2, $5, $8}' >>"$tmp/inittrace"
	done
	awk '{t[$1] += $3} END {for (r in t) print t[r]}' "$tmp/inittrace" | sort -n |
		awk '{t[NR] = $1} END {printf "total        median %6.2f ms  (min %.2f, max %.2f)\n", t[int((NR + 1) / 2)], t[1], t[NR]}'
	sort -k2,2 -k3,3n "$tmp/inittrace" |
		awk '{v[$2] = v[$2] " " $3; b[$2] = $4} END {for (p in v) {n = split(v[p], a, " "); printf "%6.3f ms %9d B  %s\n", a[int((n + 1) / 2)], b[p], p}}' |
		sort -rn | head -"${INIT_TOP:-15}"
fi

# Peak RSS: `memtool exec` (wrapped in /usr/bin/time) on the mixed
# workload, each run on a fresh directory store.
((rss_runs > 0)) || exit 0
echo
echo "== peak RSS: memtool exec on the mixed workload (${OPS:-2000} commands; max of $rss_runs runs)"
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads 1 >"$tmp/gen.log" 2>&1 || {
	cat "$tmp/gen.log" >&2
	exit 1
}
for n in "${names[@]}"; do
	[[ $n == floor ]] && continue
	printf '#!/bin/sh\nexec /usr/bin/time -f %%M -a -o %q %q "$@"\n' "$tmp/rss.$n" "$tmp/$n" >"$tmp/timed-$n"
	chmod +x "$tmp/timed-$n"
	for run in $(seq 1 "$rss_runs"); do
		"$tmp/bench" exec -memtool "$tmp/timed-$n" -store "$tmp/rss-$n-$run" -run "$run" "$tmp/mixed.jsonl" >/dev/null
	done
	sort -n "$tmp/rss.$n" | awk -v n="$n" '{k[NR] = $1} END {printf "%-12s %6.1f MiB peak RSS (runs: %d, min %.1f MiB)\n", n, k[NR] / 1024, NR, k[1] / 1024}'
done
