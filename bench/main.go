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
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench gen|exec|bare|report [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = runGen(os.Args[2:])
	case "exec":
		err = runExecDriver(os.Args[2:])
	case "bare":
		err = runBare(os.Args[2:], os.Stdout)
	case "report":
		err = runReport(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
