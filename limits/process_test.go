package limits_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/storeurl"
)

// childEnv, when set, makes the test binary a child process: it opens the
// store its value names, under the limits it names, and runs each line of
// its standard input through memtool.Memory, answering one JSON line each.
const childEnv = "MEMTOOL_LIMITS_CHILD"

type childSpec struct {
	Store  string
	Limits limits.Options
}

type answer struct {
	Error bool
	Text  string
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := serveChild(spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveChild(raw string, in io.Reader, out io.Writer) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return err
	}
	ctx := context.Background()
	inner, closer, err := storeurl.Open(ctx, spec.Store, &storeurl.Options{Create: true})
	if err != nil {
		return err
	}
	defer closer.Close()
	mem := memtool.New(limits.New(inner, &spec.Limits), nil)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 4<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		r := mem.Run(ctx, sc.Bytes())
		if err := enc.Encode(answer{r.IsError, r.Text}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// A child is a test binary serving one store under limits (see childEnv).
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	c.out.Buffer(nil, 4<<20)
	t.Cleanup(func() {
		c.in.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	})
	return c
}

// run sends the lines one after the other and returns the answers.
func (c *child) run(lines []string) ([]answer, error) {
	var out []answer
	for _, line := range lines {
		if _, err := io.WriteString(c.in, line+"\n"); err != nil {
			return out, err
		}
		if !c.out.Scan() {
			return out, fmt.Errorf("child: no answer to %s (%v)", line, c.out.Err())
		}
		var a answer
		if err := json.Unmarshal(c.out.Bytes(), &a); err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// all runs lines[i] in kids[i], all children at once, and returns the
// answers by child.
func all(t *testing.T, kids []*child, lines [][]string) [][]answer {
	t.Helper()
	answers := make([][]answer, len(kids))
	errs := make([]error, len(kids))
	var wg sync.WaitGroup
	for i, c := range kids {
		wg.Go(func() { answers[i], errs[i] = c.run(lines[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return answers
}

// processStores are the stores several processes share in the tests
// below: a directory and an SQLite file.
func processStores(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"dir":    filepath.Join(dir, "store"),
		"sqlite": "sqlite://" + filepath.Join(dir, "m.db"),
	}
}

func openURL(t *testing.T, url string) memtool.Store {
	t.Helper()
	s, closer, err := storeurl.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return s
}

func usageOf(t *testing.T, s memtool.Store) (files, bytes int64) {
	t.Helper()
	err := memtool.Walk(context.Background(), s, "", func(name string, fi memtool.FileInfo) error {
		if name != "" {
			files++
			bytes += fi.Size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, bytes
}

const racers = 4

// Processes that create files at once under MaxFiles and MaxBytes may
// each pass the check before the others' writes land, but no more: the
// package promises an overshoot of at most one operation for each other
// process writing then. Every acknowledged create is in the store.
func TestStoreLimitsAcrossProcesses(t *testing.T) {
	const maxFiles, fileSize = 40, 100
	for kind, url := range processStores(t) {
		for _, limit := range []string{limits.Files, limits.Bytes} {
			t.Run(kind+"/"+limit, func(t *testing.T) {
				opts := limits.Options{MaxFiles: maxFiles}
				if limit == limits.Bytes {
					opts = limits.Options{MaxBytes: maxFiles * fileSize}
				}
				url := url + "-" + strings.ReplaceAll(limit, " ", "")
				var kids []*child
				for range racers {
					kids = append(kids, startChild(t, childSpec{Store: url, Limits: opts}))
				}
				lines := make([][]string, racers)
				for i := range lines {
					for j := range maxFiles {
						p := fmt.Sprintf("/memories/w%d-%02d.txt", i, j)
						lines[i] = append(lines[i], cmd("create", p, "file_text", strings.Repeat(string(rune('a'+i)), fileSize)))
					}
				}
				answers := all(t, kids, lines)
				s := openURL(t, url)
				acked := 0
				for i, as := range answers {
					for j, a := range as {
						p := fmt.Sprintf("w%d-%02d.txt", i, j)
						if a.Error {
							if !strings.Contains(a.Text, "Limit exceeded ("+limit+")") {
								t.Errorf("create %s: %s", p, a.Text)
							}
							continue
						}
						acked++
						data, err := s.ReadFile(context.Background(), p, 1<<20)
						if err != nil || string(data) != strings.Repeat(string(rune('a'+i)), fileSize) {
							t.Errorf("acknowledged create of %s: %q, %v", p, data, err)
						}
					}
				}
				files, bytes := usageOf(t, s)
				t.Logf("%d creates acknowledged; the store holds %d files, %d bytes", acked, files, bytes)
				if files != int64(acked) {
					t.Errorf("%d creates acknowledged, %d files stored", acked, files)
				}
				if files > maxFiles+racers-1 || bytes > (maxFiles+racers-1)*fileSize {
					t.Errorf("the store holds %d files, %d bytes: over the limit by more than one create of each other process", files, bytes)
				}
				if files < maxFiles {
					t.Errorf("the store holds %d files: creates were refused below the limit", files)
				}
			})
		}
	}
}

// MaxFileSize holds exactly across processes: edits of one file from
// several processes at once never make it larger than the limit, and
// every acknowledged edit is in it.
func TestFileSizeAcrossProcesses(t *testing.T) {
	const maxSize, ops = 600, 40
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			opts := limits.Options{MaxFileSize: maxSize}
			var kids []*child
			for range racers {
				kids = append(kids, startChild(t, childSpec{Store: url, Limits: opts}))
			}
			if a, err := kids[0].run([]string{cmd("create", "/memories/f.txt", "file_text", "")}); err != nil || a[0].Error {
				t.Fatalf("create: %v %v", a, err)
			}
			lines := make([][]string, racers)
			for i := range lines {
				for j := range ops {
					in, _ := json.Marshal(map[string]any{"command": "insert", "path": "/memories/f.txt", "insert_line": 0, "insert_text": fmt.Sprintf("w%d-%02d", i, j)})
					lines[i] = append(lines[i], string(in))
				}
			}
			answers := all(t, kids, lines)
			s := openURL(t, url)
			data, err := s.ReadFile(context.Background(), "f.txt", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > maxSize {
				t.Errorf("f.txt is %d bytes, over MaxFileSize %d", len(data), maxSize)
			}
			for i, as := range answers {
				for j, a := range as {
					mark := fmt.Sprintf("w%d-%02d", i, j)
					switch {
					case a.Error && !strings.Contains(a.Text, "Limit exceeded (file size)"):
						t.Errorf("insert %s: %s", mark, a.Text)
					case !a.Error && !strings.Contains(string(data), mark):
						t.Errorf("acknowledged insert %s is not in f.txt", mark)
					}
				}
			}
		})
	}
}
