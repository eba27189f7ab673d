// Command views measures the two views whose cost used to grow with what
// the store holds rather than with what they show: view of a directory of
// 100,000 files and view of a 16 MiB file, each as one `memtool exec` run
// (start-up included), reporting the wall time and peak RSS of each run.
//
//	go build -o /tmp/memtool ./cmd/memtool
//	go run ./bench/views -memtool /tmp/memtool -runs 20
//
// It lays out its stores once in -dir (default a temp directory) and
// prints, per case and binary, the median and minimum wall time and the
// largest peak RSS over the runs. With several binaries (-memtool
// old,new) the runs alternate between them, so that both see the same
// load. See bench/views.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

func main() {
	bins := flag.String("memtool", "memtool", "the memtool binary to run; several, comma-separated, run in turn (paired under the same load)")
	dir := flag.String("dir", "", "where to lay out the stores (default: a temp directory, removed after)")
	runs := flag.Int("runs", 20, "runs of each case")
	files := flag.Int("files", 100000, "files in the wide directory")
	child := flag.Bool("child", false, "answer one view, read from stdin, on the file store -dir with memtool.Memory, and exit (what -bare runs)")
	bare := flag.Bool("bare", false, "also run each case as a process that only opens the file store and answers the view (no CLI start-up checks)")
	floor := flag.Bool("floor", false, "also time a process that only reads the wide directory's entries (getdents64, 64 KiB at a time): the floor under any view of it")
	readOnly := flag.Bool("read-entries", false, "read the entries of the directory -dir and exit (what -floor runs)")
	flag.Parse()
	if *child {
		answerOne(*dir)
		return
	}
	if *readOnly {
		if err := readEntries(*dir); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "memtool-views-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	wide := filepath.Join(*dir, "wide")
	big := filepath.Join(*dir, "big")
	if err := layWide(wide, *files); err != nil {
		log.Fatal(err)
	}
	if err := layBig(big); err != nil {
		log.Fatal(err)
	}
	cases := []struct{ name, store, input, want string }{
		{fmt.Sprintf("view /memories (%d files)", *files), wide, `{"command":"view","path":"/memories"}`, "cut at 16,000 characters"},
		{"view of a 16 MiB file", big, `{"command":"view","path":"/memories/big.md"}`, "Output cut at"},
		{"view of a 16 MiB file, view_range [200000, 200010]", big, `{"command":"view","path":"/memories/big.md","view_range":[200000,200010]}`, `200010\t`},
	}
	if *floor {
		if err := timeFloor(wide, *runs); err != nil {
			log.Fatal(err)
		}
	}
	binList := strings.Split(*bins, ",")
	if *bare {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		binList = append(binList, self)
	}
	for _, c := range cases {
		times := make([][]time.Duration, len(binList))
		rss := make([]int64, len(binList))
		for range *runs {
			for i, bin := range binList {
				d, r, out, err := run(bin, c.store, c.input)
				if err != nil {
					log.Fatalf("%s: %s: %v\n%s", bin, c.name, err, out)
				}
				if !strings.Contains(out, c.want) {
					log.Fatalf("%s: %s: the answer lacks %q:\n%.400s", bin, c.name, c.want, out)
				}
				times[i] = append(times[i], d)
				rss[i] = max(rss[i], r)
			}
		}
		for i, bin := range binList {
			slices.Sort(times[i])
			fmt.Printf("%-52s %-22s median %7.2f ms  min %7.2f ms  peak RSS %6.1f MB  (%d runs)\n",
				c.name, filepath.Base(bin), ms(times[i][len(times[i])/2]), ms(times[i][0]), float64(rss[i])/1e6, len(times[i]))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timeFloor times runs processes that only read the entries of dir.
func timeFloor(dir string, runs int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var times []time.Duration
	for range runs {
		start := time.Now()
		if out, err := exec.Command(self, "-read-entries", "-dir", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("reading the entries: %v\n%s", err, out)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	fmt.Printf("%-52s %-22s median %7.2f ms  min %7.2f ms  (%d runs)\n", "read the entries of "+filepath.Base(dir), "floor", ms(times[len(times)/2]), ms(times[0]), runs)
	return nil
}

// run answers one input with memtool exec and returns its wall time and
// peak RSS (bytes).
func run(bin, store, input string) (time.Duration, int64, string, error) {
	cmd := exec.Command(bin, "exec", "--store", store)
	if self, _ := os.Executable(); bin == self {
		cmd = exec.Command(bin, "-child", "-dir", store)
	}
	cmd.Stdin = strings.NewReader(input + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, out.String(), err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return d, ru.Maxrss * 1024, out.String(), nil
}

// layWide makes a store of n files of 100 bytes in its root, once.
func layWide(dir string, n int) error {
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	body := bytes.Repeat([]byte("x"), 100)
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%06d.md", i)), body, 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ".done"), nil, 0o600)
}

// layBig makes a store holding one 16 MiB file of 262,144 lines of 64
// bytes, once.
func layBig(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p := filepath.Join(dir, "big.md")
	if fi, err := os.Stat(p); err == nil && fi.Size() == 16<<20 {
		return nil
	}
	line := []byte(strings.Repeat("The user prefers concise answers, with code; ", 2)[:63] + "\n")
	data := bytes.Repeat(line, (16<<20)/len(line))
	return os.WriteFile(p, data, 0o600)
}

// answerOne is the -child process: one view on the file store in dir,
// through memtool.Memory, its answer encoded as memtool exec does.
func answerOne(dir string) {
	s, err := filestore.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	r := memtool.New(s, nil).Run(context.Background(), bytes.TrimSpace(input))
	out, err := r.MarshalJSON()
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(append(out, '\n'))
}
