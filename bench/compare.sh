#!/usr/bin/env bash
# compare.sh: ops/s of `memtool exec` (durable file store) against the
# TypeScript SDK's memory tool handler, on the same generated workloads.
# See bench/README.md.
#
#   bench/compare.sh [TS_ORACLE_DIR]
#
# TS_ORACLE_DIR holds the package.json and package-lock.json that pin
# @anthropic-ai/sdk (default: $MEMTOOL_TS_ORACLE, else
# ../shared/reference/ts-oracle relative to the repository root).
# Environment: RUNS (default 5), SEED (1), OPS (2000), FILES (100),
# READS (2000), BENCH_OUT (where results are kept; default bench/out),
# CONTEND=build (both sides run while a parallel build of memtool loads
# the CPUs and the disk; see bench/README.md).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
oracle=${1:-${MEMTOOL_TS_ORACLE:-$repo/../shared/reference/ts-oracle}}
runs=${RUNS:-5}
out=${BENCH_OUT:-$repo/bench/out}

for f in package.json package-lock.json; do
	if [[ ! -f $oracle/$f ]]; then
		echo "compare.sh: $oracle/$f not found; pass the TS oracle directory as the argument or in MEMTOOL_TS_ORACLE" >&2
		exit 2
	fi
done

mkdir -p "$out"

echo "== building memtool and the driver"
scratch_build bench

echo "== installing the TS SDK (npm ci in a temp dir)"
mkdir "$tmp/ts"
cp "$oracle/package.json" "$oracle/package-lock.json" "$tmp/ts/"
cp "$repo/bench/ts-driver.mjs" "$tmp/ts/"
(cd "$tmp/ts" && npm ci --no-audit --no-fund --loglevel=error)
sdk=$(node -p 'require(process.argv[1]).version' "$tmp/ts/node_modules/@anthropic-ai/sdk/package.json")

echo "== generating the workloads"
"$tmp/bench" gen -out "$tmp" -seed "${SEED:-1}" -ops "${OPS:-2000}" -files "${FILES:-100}" -reads "${READS:-2000}"

echo "== machine"
echo "go: $(go version | cut -d' ' -f3-)  node: $(node --version)  @anthropic-ai/sdk: $sdk  cpus: $(nproc)"
echo "temp dir: $tmp, file system: $(df -PT "$tmp" | awk 'NR == 2 {print $2}')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# contend_build rebuilds memtool from scratch in a loop, as a developer's
# parallel build would: `go build -a` compiles every package again (on all
# CPUs) and writes its objects to a build cache in the scratch directory,
# which is emptied every round so that the disk keeps being written.
contend_build() {
	mkdir -p "$tmp/contend"
	while :; do
		rm -rf "$tmp/contend/cache"
		(cd "$repo" && GOCACHE=$tmp/contend/cache go build -a -o "$tmp/contend/memtool" ./cmd/memtool) >/dev/null 2>&1 || true
	done
}
# kill_tree PID stops PID and every process below it.
kill_tree() {
	local child
	kill -STOP "$1" 2>/dev/null || return 0
	for child in $(pgrep -P "$1"); do kill_tree "$child"; done
	kill "$1" 2>/dev/null || true
	kill -CONT "$1" 2>/dev/null || true
}
case ${CONTEND:-} in
'') ;;
build)
	echo "== contention: a parallel build of memtool in a loop, from now to the end"
	contend_build &
	contender=$!
	trap 'kill_tree "$contender"; wait 2>/dev/null; rm -rf "$tmp"' EXIT
	sleep 5 # let the build get going
	;;
*)
	echo "compare.sh: CONTEND=$CONTEND: only CONTEND=build is known" >&2
	exit 2
	;;
esac

results=$out/results.jsonl
: >"$results"
for run in $(seq 1 "$runs"); do
	echo "== run $run of $runs"
	# Each run starts from an empty store; the two take turns going first,
	# so that neither always meets a warmer or colder machine.
	mt() {
		"$tmp/bench" exec -memtool "$tmp/memtool" -store "$tmp/run$run-memtool" -run "$run" \
			-answers "$out/answers-memtool.jsonl" "$tmp/mixed.jsonl" "$tmp/read-only.jsonl" | tee -a "$results"
	}
	ts() {
		(cd "$tmp/ts" && LC_ALL=C node ts-driver.mjs "$tmp/run$run-ts" "$run" "$out/answers-ts.jsonl" \
			"$tmp/mixed.jsonl" "$tmp/read-only.jsonl") | tee -a "$results"
	}
	if ((run % 2)); then mt; ts; else ts; mt; fi
	rm -rf "$tmp/run$run-memtool" "$tmp/run$run-ts"
done

echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)${CONTEND:+ (CONTEND=$CONTEND)}"
echo "== results (raw lines in $results)"
"$tmp/bench" report -results "$results" \
	-answers-memtool "$out/answers-memtool.jsonl" -answers-ts "$out/answers-ts.jsonl"
cat <<'EOF'

Durability is not equal: memtool reports success only after fsync of the
file and of its directory (create, str_replace, insert). The TS SDK handler
fsyncs the file but never its directory, so a new file (create) or a new
version (str_replace/insert: temp file + rename) can vanish in a crash after
it answered. memtool also takes a lock (mutex + flock) per write, and its
timing includes the JSON round trip through the exec pipe, which the
in-process TS handler does not pay.
EOF
