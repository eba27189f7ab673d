// Command serve measures memtool serve under load on one machine, over
// loopback; bench/serve.sh runs it on each store (see docs/serve.md):
//
//	serve -memtool BIN -store URL [-keys URL] -workload mixed.jsonl [-clients 64] [-tenants 1] [-duration 20s] [-exec [-exec-order interleaved|sequential]]
//
// It adds a key per tenant (memtool keys add), starts memtool serve on a free
// loopback port, and runs CLIENTS clients at once, each replaying the
// workload (bench gen's mixed.jsonl) in its own directory, /memories/cN,
// of one tenant's memory, or of one of TENANTS tenants' (-tenants),
// one request after another, until it is done or DURATION has passed.
// Every answer is checked: an HTTP error or a tool error is counted and
// reported. It prints the requests answered per second, the latency
// percentiles and the server's CPU time per request. With -exec it also
// runs as many copies of one client's workload as there are clients (as
// many commands as the server got, taken in turns as the clients' are)
// through one memtool exec process on the same store, for its throughput
// and CPU time per command, and the ratio of the server's CPU time per
// request to it. For both it prints how busy the machine was besides
// this program (from /proc/stat), and for exec the bound that follows:
// no server on this machine can answer more than its cores divided by
// the CPU the machine spent per exec command (exec's, the database
// server's, the kernel's). The machine's CPU counts every process on it:
// those figures mean something only on a machine doing nothing else.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool/bench/internal/workfile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("memtool", "", "the memtool binary")
	store := flag.String("store", "", "the store URL")
	keysURL := flag.String("keys", "", "where the keys live (default: the store)")
	workload := flag.String("workload", "", "bench gen's mixed.jsonl")
	clients := flag.Int("clients", 64, "clients at once")
	duration := flag.Duration("duration", 20*time.Second, "the most time the load runs")
	withExec := flag.Bool("exec", false, "also run one client's workload through memtool exec")
	label := flag.String("label", "", "the store's name in the output")
	tenants := flag.Int("tenants", 1, "spread the clients over this many tenants, a key each")
	execOrder := flag.String("exec-order", "interleaved", "the order of exec's commands: interleaved (as the clients') or sequential (one copy after another)")
	flag.Parse()
	if *execOrder != "interleaved" && *execOrder != "sequential" {
		return errors.New("-exec-order is interleaved or sequential")
	}
	if *bin == "" || *store == "" || *workload == "" {
		return errors.New("-memtool, -store and -workload are required")
	}
	inputs, err := workfile.Read(*workload)
	if err != nil {
		return err
	}
	keys := *keysURL
	if keys == "" {
		keys = *store
	}
	// Tenants of this run alone, so that runs can share a store.
	run := fmt.Sprintf("bench%x", time.Now().UnixNano()&0xffffffff)
	var tokens []string
	for i := range max(*tenants, 1) {
		out, err := exec.Command(*bin, "keys", "add", "--store", keys, "--tenant", fmt.Sprintf("%s-%d", run, i), "--name", "bench").Output()
		if err != nil {
			return fmt.Errorf("keys add: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		tokens = append(tokens, lines[len(lines)-1])
	}

	args := []string{"serve", "--store", *store, "--listen", "127.0.0.1:0", "--rate", "-1"}
	if *keysURL != "" {
		args = append(args, "--keys", *keysURL)
	}
	srv, base, err := startServe(*bin, args)
	if err != nil {
		return err
	}
	defer srv.Process.Kill()

	transport := &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients}
	client := &http.Client{Transport: transport, Timeout: time.Minute}
	before, err := sampleCPU(srv.Process.Pid)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var latencies []time.Duration
	var failures []string
	deadline := time.Now().Add(*duration)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range *clients {
		wg.Go(func() {
			var mine []time.Duration
			var failed []string
			for _, in := range workfile.Under(inputs, fmt.Sprintf("/memories/c%d", c)) {
				if time.Now().After(deadline) {
					break
				}
				t0 := time.Now()
				answer, err := call(client, base, tokens[c%len(tokens)], in)
				mine = append(mine, time.Since(t0))
				if err != nil {
					failed = append(failed, err.Error())
				} else if bytes.Contains(answer, []byte(`"is_error":true`)) {
					failed = append(failed, string(answer))
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failures = append(failures, failed...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := sampleCPU(srv.Process.Pid)
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	n := len(latencies)
	name := *label
	if name == "" {
		name = *store
	}
	on := "1 tenant"
	if len(tokens) > 1 {
		on = fmt.Sprintf("%d tenants", len(tokens))
	}
	serverCPU := float64((after.proc - before.proc).Microseconds()) / float64(n)
	fmt.Printf("%-10s serve: %d clients on %s, %d requests in %.1fs: %.0f ops/s, p50 %s, p99 %s, server CPU %.0f µs/op, %d failed\n",
		name, *clients, on, n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), pct(latencies, 50), pct(latencies, 99),
		serverCPU, len(failures))
	fmt.Printf("%-10s serve: %.2f of %d cores busy besides the clients\n",
		name, (after.others-before.others).Seconds()/elapsed.Seconds(), runtime.NumCPU())
	if len(failures) > 0 {
		fmt.Printf("  first failure: %.300s\n", failures[0])
	}
	if *withExec {
		// As many commands as the server got, for a CPU time of many of
		// /proc's 10 ms ticks: each client's copy of the workload, in its
		// own directory, taken in turns (one command of each copy, then
		// the next of each) as the server's clients interleave, so that
		// the engine does the same work (one copy after another would
		// touch 20 files at a time, not 20 times the clients, which
		// spares SQLite's search index most of its merges); -exec-order
		// sequential runs the copies one after another.
		copies := make([][][]byte, *clients)
		for i := range copies {
			copies[i] = workfile.Under(inputs, fmt.Sprintf("/memories/exec%d", i))
		}
		var lines [][]byte
		if *execOrder == "sequential" {
			lines = slices.Concat(copies...)
		} else {
			for j := range inputs {
				for _, c := range copies {
					lines = append(lines, c[j])
				}
			}
		}
		execCPU, err := runExec(*bin, *store, run+"-0", lines, *duration, name)
		if err != nil {
			return err
		}
		fmt.Printf("%-10s server CPU per request / exec CPU per command: %.2f\n", name, serverCPU/execCPU)
	}
	return nil
}

// runExec sends inputs through one memtool exec process, one line after
// another, and prints its rate and CPU time per command, which it returns
// (in µs).
func runExec(bin, store, tenant string, inputs [][]byte, limit time.Duration, name string) (float64, error) {
	args := []string{"exec", "--store", store, "--tenant", tenant}
	if store == "mem:" { // no tenants: a memory of its own anyway
		args = args[:3]
	}
	cmd := exec.Command(bin, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	out := bufio.NewReaderSize(outPipe, 1<<20)
	ask := func(line []byte) ([]byte, error) {
		if _, err := in.Write(append(line, '\n')); err != nil {
			return nil, err
		}
		return out.ReadBytes('\n')
	}
	if _, err := ask([]byte(`{"command":"view","path":"/memories"}`)); err != nil {
		return 0, err
	}
	before, err := sampleCPU(cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(limit)
	start := time.Now()
	n, failed := 0, 0
	for _, line := range inputs {
		if time.Now().After(deadline) {
			break
		}
		answer, err := ask(line)
		if err != nil {
			return 0, err
		}
		if bytes.Contains(answer, []byte(`"is_error":true`)) {
			failed++
		}
		n++
	}
	elapsed := time.Since(start)
	after, err := sampleCPU(cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	in.Close()
	cmd.Wait()
	perOp := float64((after.proc - before.proc).Microseconds()) / float64(n)
	rate := float64(n) / elapsed.Seconds()
	fmt.Printf("%-10s exec:  1 process, %d commands in %.1fs: %.0f ops/s, CPU %.0f µs/op, %d failed\n",
		name, n, elapsed.Seconds(), rate, perOp, failed)
	// The CPU the machine spent per command besides this driver: exec's,
	// the database server's and the kernel's. No server on this machine
	// can answer faster than its cores divided by that, even one that
	// cost nothing itself, with clients that cost nothing.
	allOp := float64((after.others - before.others).Microseconds()) / float64(n)
	cores := float64(runtime.NumCPU())
	fmt.Printf("%-10s exec:  machine CPU %.0f µs/op (%.2f of %.0f cores busy): any server here is at most %.2f× exec's rate\n",
		name, allOp, allOp*rate/1e6, cores, cores*1e6/allOp/rate)
	return perOp, nil
}

// A cpuSample is, at one moment, the CPU time one process has used so far
// and the one the whole machine has besides this program (see othersCPU).
type cpuSample struct{ proc, others time.Duration }

// sampleCPU reads process pid's CPU time, then the machine's.
func sampleCPU(pid int) (cpuSample, error) {
	proc, err := cpuTime(pid)
	if err != nil {
		return cpuSample{}, err
	}
	others, err := othersCPU()
	if err != nil {
		return cpuSample{}, err
	}
	return cpuSample{proc, others}, nil
}

// othersCPU is the CPU time the whole machine has used so far (user,
// nice, system, irq and softirq time in /proc/stat), less this process's
// own (Linux).
func othersCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq …
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %v", err)
		}
		ticks += v
	}
	self, err := cpuTime(os.Getpid())
	if err != nil {
		return 0, err
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ticks)*time.Second/hz - self, nil
}

// startServe starts memtool serve and returns it once it serves, with its
// URL (from its "serving" log line).
func startServe(bin string, args []string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, args...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	sc := bufio.NewScanner(errPipe)
	for sc.Scan() {
		var l struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "serving" {
			go io.Copy(io.Discard, errPipe) // the access log
			return cmd, l.URL, nil
		}
		fmt.Fprintln(os.Stderr, sc.Text())
	}
	cmd.Process.Kill()
	return nil, "", errors.New("memtool serve ended before serving")
}

func call(client *http.Client, base, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequest("POST", base+"/v1/memory", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return b, err
}

// cpuTime is the user and system CPU time of process pid so far (Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	d := sorted[(len(sorted)-1)*p/100]
	return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000)
}
