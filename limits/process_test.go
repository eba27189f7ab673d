package limits_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
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

func TestMain(m *testing.M) {
	childproc.Serve(childEnv, openChild)
	os.Exit(m.Run())
}

// openChild opens the store of a child's spec under its limits.
func openChild(ctx context.Context, raw []byte, inner memtool.Store) (func(string) childproc.Answer, error) {
	var spec childSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, err
	}
	mem := memtool.New(limits.New(inner, &spec.Limits), nil)
	answer := func(line string) childproc.Answer {
		r := mem.Run(ctx, []byte(line))
		return childproc.Answer{Error: r.IsError, Text: r.Text}
	}
	return answer, nil
}

func startChild(t *testing.T, spec childSpec) *childproc.Child {
	return childproc.Start(t, childEnv, spec)
}

// processStores are the stores several processes share in the tests
// below: a directory, an SQLite file and a PostgreSQL schema. Each
// call of a kind's function gives a new, empty store.
func processStores() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"dir":      func(t *testing.T) string { return filepath.Join(t.TempDir(), "store") },
		"sqlite":   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "m.db") },
		"postgres": func(t *testing.T) string { return pgtest.URL(t) },
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

const racers = 4

// Processes that create files at once under MaxFiles and MaxBytes may
// each pass the check before the others' writes land, but no more: the
// package promises an overshoot of at most one operation for each other
// process writing then. Every acknowledged create is in the store.
func TestStoreLimitsAcrossProcesses(t *testing.T) {
	const maxFiles, fileSize = 40, 100
	for kind, newURL := range processStores() {
		for _, limit := range []string{limits.Files, limits.Bytes} {
			t.Run(kind+"/"+limit, func(t *testing.T) {
				opts := limits.Options{MaxFiles: maxFiles}
				if limit == limits.Bytes {
					opts = limits.Options{MaxBytes: maxFiles * fileSize}
				}
				url := newURL(t)
				var kids []*childproc.Child
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
				answers := childproc.All(t, kids, lines)
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
				files, bytes := storetest.Usage(t, s)
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
	for kind, newURL := range processStores() {
		t.Run(kind, func(t *testing.T) {
			url := newURL(t)
			opts := limits.Options{MaxFileSize: maxSize}
			var kids []*childproc.Child
			for range racers {
				kids = append(kids, startChild(t, childSpec{Store: url, Limits: opts}))
			}
			if a, err := kids[0].Run([]string{cmd("create", "/memories/f.txt", "file_text", "")}); err != nil || a[0].Error {
				t.Fatalf("create: %v %v", a, err)
			}
			lines := make([][]string, racers)
			for i := range lines {
				for j := range ops {
					in, _ := json.Marshal(map[string]any{"command": "insert", "path": "/memories/f.txt", "insert_line": 0, "insert_text": fmt.Sprintf("w%d-%02d", i, j)})
					lines[i] = append(lines[i], string(in))
				}
			}
			answers := childproc.All(t, kids, lines)
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
