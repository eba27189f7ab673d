// Command bench is the driver of compare.sh, which measures `memtool exec`
// against the TypeScript SDK's memory tool handler on one workload:
//
//	bench gen -out DIR [-seed N -ops N -files N -reads N]
//	    writes DIR/mixed.jsonl and DIR/read-only.jsonl
//	bench exec -memtool BIN -store DIR [-run N -answers FILE] WORKLOAD.jsonl...
//	    runs the workloads through one `memtool exec` process and prints
//	    one result line per workload
//	bench bare -bare BIN -memtool BIN[,BIN...] -store DIR [-runs N] READS.jsonl
//	    runs a read-only workload through the bare exec loop (bareexec)
//	    and through memtool exec, in turns, and prints their throughputs
//	    and ratios (see bare.md)
//	bench report -results FILE [-answers-memtool FILE -answers-ts FILE]
//	    prints ops/s of both, their ratio, and per-command latencies
//
// A workload file has one line per command: {"kind":K,"input":{...}}, where
// input is the tool input and kind is its command (views are view_file or
// view_dir). A result line is {"impl","workload","run","ops","seconds",
// "errors","kinds":{K:{"n","seconds"}}}; the Node driver ts-driver.mjs
// writes the same lines.
package main

import (
	"os"

	"github.com/memtool/memtool/bench/internal/subcmd"
)

func main() {
	os.Exit(subcmd.Run("bench", os.Args[1:], os.Stderr, []subcmd.Command{
		{Name: "gen", Run: runGen},
		{Name: "exec", Run: runExecDriver},
		{Name: "bare", Run: func(args []string) error { return runBare(args, os.Stdout) }},
		{Name: "report", Run: func(args []string) error { return runReport(args, os.Stdout) }},
	}))
}
