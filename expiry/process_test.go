package expiry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/storeurl"
)

// childEnv, when set, makes the test binary a child process on the store
// its value names, whose clock is the Unix time written in a file, shared
// by every process of a test, so that their clocks agree. Each line of its
// standard input is a tool input, run through memtool.Memory over the
// expiry wrapper, or "gc" (Collect, unused for a day) or "restore PATH";
// each gets one JSON line of answer.
const childEnv = "MEMTOOL_EXPIRY_CHILD"

type childSpec struct {
	Store, Clock string
}

func TestMain(m *testing.M) {
	childproc.Serve(childEnv, openChild)
	os.Exit(m.Run())
}

// fileClock reads the time from a file.
func fileClock(name string) func() time.Time {
	return func() time.Time {
		data, err := os.ReadFile(name)
		if err != nil {
			panic(err)
		}
		sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			panic(err)
		}
		return time.Unix(sec, 0)
	}
}

func setClock(t *testing.T, name string, tm time.Time) {
	t.Helper()
	if err := os.WriteFile(name, []byte(strconv.FormatInt(tm.Unix(), 10)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// openChild opens the store of a child's spec under expiry, on the
// spec's clock.
func openChild(ctx context.Context, raw []byte, inner memtool.Store) (func(string) childproc.Answer, error) {
	var spec childSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, err
	}
	now := fileClock(spec.Clock)
	mem := memtool.New(expiry.New(inner, &expiry.Options{Now: now}), &memtool.Options{Overwrite: true})
	answer := func(line string) childproc.Answer {
		switch {
		case line == "gc":
			rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 24 * time.Hour, Now: now})
			return childproc.Answer{Error: err != nil, Text: fmt.Sprint(len(rep.Expired), err)}
		case strings.HasPrefix(line, "restore "):
			_, err := expiry.Restore(ctx, inner, strings.TrimPrefix(line, "restore "), now())
			return childproc.Answer{Error: err != nil, Text: fmt.Sprint(err)}
		}
		r := mem.Run(ctx, []byte(line))
		return childproc.Answer{Error: r.IsError, Text: r.Text}
	}
	return answer, nil
}

func startChild(t *testing.T, spec childSpec) *childproc.Child {
	return childproc.Start(t, childEnv, spec)
}

// succeed runs lines in c and fails t at once if one fails.
func succeed(t *testing.T, c *childproc.Child, lines ...string) {
	t.Helper()
	as, err := c.Run(lines)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range as {
		if a.Error {
			t.Fatalf("%s: %s", lines[i], a.Text)
		}
	}
}

func tool(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func processStores(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"dir":    filepath.Join(dir, "store"),
		"sqlite": "sqlite://" + filepath.Join(dir, "m.db"),
	}
}

func readVia(t *testing.T, url string) func(name string) (string, bool) {
	t.Helper()
	s, closer, err := storeurl.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return func(name string) (string, bool) {
		data, err := s.ReadFile(context.Background(), name, 1<<20)
		return string(data), err == nil
	}
}

var epoch = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

// dueFiles starts a child on the store at url, on a clock of its own at
// epoch, has it create n files spread over dirs directories (/memories/dD/
// fNNN.md, each holding "v0 " and its path), and moves the clock on ten
// days, so that every file is due. It returns the spec (for more children
// on the store and clock), the child, and the files' names by number.
func dueFiles(t *testing.T, url string, n, dirs int) (childSpec, *childproc.Child, func(int) string) {
	t.Helper()
	clock := filepath.Join(t.TempDir(), "clock")
	setClock(t, clock, epoch)
	spec := childSpec{Store: url, Clock: clock}
	setup := startChild(t, spec)
	name := func(i int) string { return fmt.Sprintf("/memories/d%d/f%03d.md", i%dirs, i) }
	for i := range n {
		succeed(t, setup, tool(map[string]any{"command": "create", "path": name(i), "file_text": "v0 " + name(i)}))
	}
	setClock(t, clock, epoch.Add(10*24*time.Hour))
	return spec, setup, name
}

// gc in one process while others write, edit, recreate and rename the
// files it is expiring, with clocks that agree: every change acknowledged
// after the files fell due is where it was made, with what was made,
// when gc is done; none is left in the trash.
func TestCollectAcrossProcesses(t *testing.T) {
	const files, writers = 120, 3
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			spec, _, name := dueFiles(t, url, files, 4)
			gc := startChild(t, spec)
			kids := []*childproc.Child{gc}
			lines := [][]string{{"gc"}}
			for w := range writers {
				kids = append(kids, startChild(t, spec))
				var ls []string
				for i := w; i < files; i += writers {
					p := name(i)
					switch i % 4 {
					case 0:
						ls = append(ls, tool(map[string]any{"command": "create", "path": p, "file_text": "v1 " + p}))
					case 1:
						ls = append(ls, tool(map[string]any{"command": "str_replace", "path": p, "old_str": "v0", "new_str": "v1"}))
					case 2:
						ls = append(ls, tool(map[string]any{"command": "delete", "path": p}),
							tool(map[string]any{"command": "create", "path": p, "file_text": "v1 " + p}))
					case 3:
						ls = append(ls, tool(map[string]any{"command": "rename", "old_path": p, "new_path": p + ".tmp"}),
							tool(map[string]any{"command": "rename", "old_path": p + ".tmp", "new_path": p}))
					}
				}
				lines = append(lines, ls)
			}
			answers := childproc.All(t, kids, lines)
			t.Logf("gc: %s", answers[0][0].Text)
			if answers[0][0].Error {
				t.Errorf("gc failed: %s", answers[0][0].Text)
			}
			read := readVia(t, url)
			for w := range writers {
				k := 0
				for i := w; i < files; i += writers {
					p := name(i)
					rel := strings.TrimPrefix(p, "/memories/")
					var want string // the content acknowledged last, "" if none
					switch i % 4 {
					case 0, 1:
						if a := answers[w+1][k]; !a.Error {
							want = "v1 " + p
						}
						k++
					case 2:
						if a := answers[w+1][k+1]; !a.Error {
							want = "v1 " + p
						}
						k += 2
					case 3:
						if a, b := answers[w+1][k], answers[w+1][k+1]; !a.Error && !b.Error {
							want = "v0 " + p
						} else if !a.Error {
							if got, ok := read(rel + ".tmp"); !ok || got != "v0 "+p {
								t.Errorf("%s renamed to .tmp (acknowledged), then: %q, %v; back: %s", p, got, ok, b.Text)
							}
						}
						k += 2
					}
					if want == "" {
						continue
					}
					if got, ok := read(rel); !ok || got != want {
						t.Errorf("%s: holds %q (there: %v), want %q, acknowledged while gc ran", p, got, ok, want)
					}
				}
			}
		})
	}
}

// A restore in one process races writes of the same paths in others: a
// write acknowledged is never undone by a restore landing after it, and a
// restore that reports success put the file where no write had been.
func TestRestoreAcrossProcesses(t *testing.T) {
	const files = 40
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			spec, setup, name := dueFiles(t, url, files, 3)
			succeed(t, setup, "gc")
			restorer, writer := startChild(t, spec), startChild(t, spec)
			var restores, writes []string
			for i := range files {
				restores = append(restores, "restore "+name(i))
				writes = append(writes, tool(map[string]any{"command": "create", "path": name(i), "file_text": "v1 " + name(i)}))
			}
			answers := childproc.All(t, []*childproc.Child{restorer, writer}, [][]string{restores, writes})
			read := readVia(t, url)
			restored := 0
			for i := range files {
				p := name(i)
				r, w := answers[0][i], answers[1][i]
				if !r.Error {
					restored++
				} else if !strings.Contains(r.Text, "exist") {
					t.Errorf("restore %s: %s", p, r.Text)
				}
				want := "v1 " + p
				switch {
				case w.Error && (r.Error || !strings.Contains(w.Text, "already exists")):
					t.Errorf("create %s: %s (restore: %s)", p, w.Text, r.Text)
					continue
				case w.Error:
					// Memory's overwriting create found nothing, then the
					// restored file in the way: the restore came first.
					want = "v0 " + p
				}
				if got, _ := read(strings.TrimPrefix(p, "/memories/")); got != want {
					t.Errorf("%s holds %q, want %q (restore: %s; create: %s)", p, got, want, r.Text, w.Text)
				}
			}
			t.Logf("%d of %d restores landed before the create", restored, files)
		})
	}
}
