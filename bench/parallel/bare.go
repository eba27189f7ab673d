package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool/internal/durable"
)

// runBare measures the floor of a turn on this disk, without memtool: a
// bare Go loop replaces CALLS files of 2 KB durably (write a temp file,
// sync it, rename it over the file, fsync the directory) one after
// another, and then all at once (a goroutine each, 8 at a time as exec
// runs a turn, or all CALLS; one directory fsync after the renames), with
// fsync and with fdatasync; and, as no one-file-at-a-time durable write
// can, with syncfs: every temp file written, one syncfs(2) of the whole
// file system, every rename, one more syncfs. A last way runs 8 at once
// with each replacement fsyncing the directory itself, as a file store
// must before it acknowledges each write. Rounds rotate the order; it
// prints each way's median time and its ratio to the sequential one's
// median.
func runBare(args []string) error {
	fs := flag.NewFlagSet("bare", flag.ContinueOnError)
	dir := fs.String("dir", "", "an empty directory to write in (required)")
	calls := fs.Int("calls", 64, "files replaced per round")
	rounds := fs.Int("rounds", 7, "rounds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	data := make([]byte, 2048)
	for i := range *calls {
		if err := os.WriteFile(filepath.Join(*dir, fmt.Sprintf("f%02d", i)), data, 0o600); err != nil {
			return err
		}
	}
	type way struct {
		name   string
		at     int // how many at once
		fdsync bool
		each   bool // every replacement fsyncs the directory itself
	}
	ways := []way{{"sequential, fsync", 1, false, true}, {"8 at once, fsync", 8, false, false}, {"all at once, fsync", *calls, false, false},
		{"8 at once, fdatasync", 8, true, false}, {"all at once, fdatasync", *calls, true, false},
		{"all at once, syncfs", -1, false, false}, {"8 at once, dir fsync each", 8, false, true}}
	times := make([][]time.Duration, len(ways))
	for r := range *rounds {
		for k := range ways {
			w := ways[(k+r)%len(ways)]
			start := time.Now()
			if err := bareRound(*dir, data, *calls, w.at, w.fdsync, w.each); err != nil {
				return err
			}
			i := (k + r) % len(ways)
			times[i] = append(times[i], time.Since(start))
		}
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	seq := median(times[0])
	for i, w := range ways {
		m := median(times[i])
		fmt.Printf("%-24s median %7.2f ms  (min %.2f, max %.2f)  %.2f× sequential\n", w.name,
			ms(m), ms(times[i][0]), ms(times[i][len(times[i])-1]), float64(m)/float64(seq))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// bareRound replaces every file once, at most at files at once; with each
// every replacement fsyncs the directory itself, else one directory fsync
// follows them all; with at < 0 by syncfsRound.
func bareRound(dir string, data []byte, calls, at int, fdsync, each bool) error {
	if at < 0 {
		return syncfsRound(dir, data, calls)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, at)
	)
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := replace(dir, fmt.Sprintf("f%02d", i), data, fdsync, each); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	if !each {
		return durable.SyncDir(dir)
	}
	return nil
}

func replace(dir, name string, data []byte, fdsync, dirSync bool) error {
	tmp := filepath.Join(dir, ".tmp-"+name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && fdsync {
		err = unix.Fdatasync(int(f.Fd()))
	} else if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil && dirSync {
		err = durable.SyncDir(dir)
	}
	return err
}

// syncfsRound writes every file's temp file, makes them all durable with
// one syncfs, renames them all and makes the renames durable with one
// more. syncfs writes out whatever else on the file system is dirty too,
// so it costs what other programs' writes cost as well.
func syncfsRound(dir string, data []byte, calls int) error {
	for i := range calls {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf(".tmp-f%02d", i)), data, 0o600); err != nil {
			return err
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return err
	}
	for i := range calls {
		name := fmt.Sprintf("f%02d", i)
		if err := os.Rename(filepath.Join(dir, ".tmp-"+name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return unix.Syncfs(int(d.Fd()))
}
