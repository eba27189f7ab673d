//go:build unix

package server

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// appendProcess writes the process's figures under the names Prometheus'
// process collector gives them: CPU time and the descriptor limit
// everywhere, memory, open descriptors and the start time where /proc
// tells them (Linux).
func appendProcess(b []byte) []byte {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
		b = appendCounter(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", cpu)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		b = appendGauge(b, "process_max_fds", "Maximum number of open file descriptors.", float64(lim.Cur))
	}
	if f, err := os.Open("/proc/self/fd"); err == nil {
		names, err := f.Readdirnames(-1)
		f.Close()
		if err == nil {
			b = appendGauge(b, "process_open_fds", "Number of open file descriptors.", float64(len(names)))
		}
	}
	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := bytes.Fields(statm); len(f) >= 2 {
			page := float64(os.Getpagesize())
			size, err1 := strconv.ParseUint(string(f[0]), 10, 64)
			rss, err2 := strconv.ParseUint(string(f[1]), 10, 64)
			if err1 == nil && err2 == nil {
				b = appendGauge(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(size)*page)
				b = appendGauge(b, "process_resident_memory_bytes", "Resident memory size in bytes.", float64(rss)*page)
			}
		}
	}
	if start, ok := processStart(); ok {
		b = appendGauge(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", start)
	}
	return b
}

// processStart is the process's start time in seconds since the epoch,
// from its start in clock ticks after boot (/proc/self/stat, field 22)
// and the boot time (/proc/stat's btime), at the kernel's fixed 100
// ticks a second for this figure (USER_HZ).
func processStart() (float64, bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(stat[i+1:]) // field 3 onwards
	if len(f) < 20 {
		return 0, false
	}
	ticks, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, false
	}
	all, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(all) {
		if rest, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			boot, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
			if err != nil {
				return 0, false
			}
			return float64(boot) + float64(ticks)/100, true
		}
	}
	return 0, false
}
