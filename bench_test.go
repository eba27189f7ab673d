package memtool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
)

// Benchmarks of each command through Memory.Run (JSON parsing included), on
// the memory store and on the file store in b.TempDir():
//
//	go test -run '^$' -bench . -count 5 .
//
// Every benchmark keeps its state bounded: creates and deletes work in
// batches whose setup and cleanup run with the timer stopped, inserts reset
// their file every few rounds, str_replace and rename go back and forth.
// Every answer is checked: a failed command stops the benchmark.

// benchFileText is about 4 KiB of memory-file text, 80 lines of 51 bytes.
var benchFileText = func() string {
	var sb strings.Builder
	for i := range 80 {
		fmt.Fprintf(&sb, "- [%02d] The user prefers concise answers with code.\n", i)
	}
	return sb.String()
}()

// benchEachStore runs fn as the sub-benchmarks store=mem and store=file.
func benchEachStore(b *testing.B, fn func(b *testing.B, m *memtool.Memory, s memtool.Store)) {
	b.Run("store=mem", func(b *testing.B) {
		s := memstore.New()
		fn(b, memtool.New(s, nil), s)
	})
	b.Run("store=file", func(b *testing.B) {
		s, err := filestore.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		fn(b, memtool.New(s, nil), s)
	})
}

// benchInput is the JSON tool input of a command.
func benchInput(b *testing.B, fields map[string]any) []byte {
	in, err := json.Marshal(fields)
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// benchRun runs one input and stops the benchmark if the command failed.
func benchRun(b *testing.B, m *memtool.Memory, input []byte) memtool.Result {
	r := m.Run(context.Background(), input)
	if r.IsError {
		b.Fatalf("%s: %s", input, r.Text)
	}
	return r
}

func benchCreate(b *testing.B, m *memtool.Memory, p, text string) {
	benchRun(b, m, benchInput(b, map[string]any{"command": "create", "path": p, "file_text": text}))
}

func BenchmarkView(b *testing.B) {
	b.Run("target=file", func(b *testing.B) {
		benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
			benchCreate(b, m, "/memories/view/notes.md", benchFileText)
			in := benchInput(b, map[string]any{"command": "view", "path": "/memories/view/notes.md"})
			if r := benchRun(b, m, in); !strings.Contains(r.Text, "    80\t- [79]") {
				b.Fatalf("view shows the wrong text:\n%s", r.Text)
			}
			b.ReportAllocs()
			for b.Loop() {
				benchRun(b, m, in)
			}
		})
	})
	b.Run("target=dir", func(b *testing.B) {
		benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
			// 100 entries: 16 files and 4 directories of 20 files each.
			for i := range 16 {
				benchCreate(b, m, fmt.Sprintf("/memories/list/top-%02d.md", i), benchFileText[:100*(i+1)])
			}
			for d := range 4 {
				for i := range 20 {
					benchCreate(b, m, fmt.Sprintf("/memories/list/dir-%d/note-%02d.md", d, i), benchFileText[:50*(i+1)])
				}
			}
			in := benchInput(b, map[string]any{"command": "view", "path": "/memories/list"})
			if r := benchRun(b, m, in); strings.Count(r.Text, "\n") != 101 {
				b.Fatalf("listing has %d lines, want 102:\n%s", strings.Count(r.Text, "\n")+1, r.Text)
			}
			b.ReportAllocs()
			for b.Loop() {
				benchRun(b, m, in)
			}
		})
	})
}

// benchBatch is how many files a create or delete benchmark handles between
// two cleanups, so that the store does not grow with b.N.
const benchBatch = 256

func BenchmarkCreate(b *testing.B) {
	benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
		ctx := context.Background()
		benchBatches(b, m, s, "create", func(first int) [][]byte {
			// The batch's directory exists before the timed creates,
			// so each of them creates just its file.
			n := first / benchBatch
			dir := fmt.Sprintf("create/b%d", n)
			if n > 0 {
				benchRun(b, m, benchInput(b, map[string]any{"command": "delete", "path": path.Join("/memories/create", fmt.Sprintf("b%d", n-1))}))
			}
			if err := s.Mkdir(ctx, dir); err != nil {
				b.Fatal(err)
			}
			var inputs [][]byte
			for j := range benchBatch {
				inputs = append(inputs, benchInput(b, map[string]any{
					"command": "create", "path": fmt.Sprintf("/memories/%s/f%d.md", dir, j), "file_text": benchFileText,
				}))
			}
			return inputs
		})
	})
}

// benchBatches makes the directory dir, then runs b.N inputs, benchBatch at
// a time: batch makes the inputs of the runs from first on (and whatever
// they need in the store), off the clock.
func benchBatches(b *testing.B, m *memtool.Memory, s memtool.Store, dir string, batch func(first int) [][]byte) {
	if err := s.Mkdir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	var inputs [][]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchBatch == 0 {
			b.StopTimer()
			inputs = batch(i)
			b.StartTimer()
		}
		benchRun(b, m, inputs[i%benchBatch])
	}
}

// benchAlternate runs the two inputs in turn, each undoing the other, so
// that the store stays as it was.
func benchAlternate(b *testing.B, m *memtool.Memory, inputs [2][]byte) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		benchRun(b, m, inputs[i%2])
		i++
	}
}

func BenchmarkStrReplace(b *testing.B) {
	benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
		text := strings.Replace(benchFileText, "- [40] The user prefers concise answers with code.", "- [40] status: draft", 1)
		benchCreate(b, m, "/memories/edit/notes.md", text)
		// Back and forth, so the file keeps its size.
		inputs := [2][]byte{
			benchInput(b, map[string]any{"command": "str_replace", "path": "/memories/edit/notes.md", "old_str": "status: draft", "new_str": "status: final"}),
			benchInput(b, map[string]any{"command": "str_replace", "path": "/memories/edit/notes.md", "old_str": "status: final", "new_str": "status: draft"}),
		}
		benchAlternate(b, m, inputs)
	})
}

func BenchmarkInsert(b *testing.B) {
	benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
		ctx := context.Background()
		benchCreate(b, m, "/memories/edit/log.md", benchFileText)
		in := benchInput(b, map[string]any{"command": "insert", "path": "/memories/edit/log.md", "insert_line": 40, "insert_text": "- inserted: the user moved to Lisbon.\n"})
		const rounds = 64 // inserts before the file is reset to 4 KiB
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i > 0 && i%rounds == 0 {
				b.StopTimer()
				if err := s.WriteFile(ctx, "edit/log.md", []byte(benchFileText), memtool.Replace); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			benchRun(b, m, in)
		}
	})
}

func BenchmarkDelete(b *testing.B) {
	benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
		ctx := context.Background()
		benchBatches(b, m, s, "del", func(first int) [][]byte {
			var inputs [][]byte
			for j := range benchBatch {
				name := fmt.Sprintf("del/f%d.md", first+j)
				if err := s.WriteFile(ctx, name, []byte(benchFileText), memtool.CreateOnly); err != nil {
					b.Fatal(err)
				}
				inputs = append(inputs, benchInput(b, map[string]any{"command": "delete", "path": "/memories/" + name}))
			}
			return inputs
		})
	})
}

func BenchmarkRename(b *testing.B) {
	benchEachStore(b, func(b *testing.B, m *memtool.Memory, s memtool.Store) {
		benchCreate(b, m, "/memories/ren/a.md", benchFileText)
		// Back and forth within one directory.
		inputs := [2][]byte{
			benchInput(b, map[string]any{"command": "rename", "old_path": "/memories/ren/a.md", "new_path": "/memories/ren/b.md"}),
			benchInput(b, map[string]any{"command": "rename", "old_path": "/memories/ren/b.md", "new_path": "/memories/ren/a.md"}),
		}
		benchAlternate(b, m, inputs)
	})
}

// BenchmarkViewPaired alternates, in one loop, a file view through
// Memory.Run on the file store (parsing and the answer's JSON included)
// and the least such a view can cost: open and read the file, number its
// lines, encode the answer with encoding/json. It reports the ratio of
// their times (memtool/bare; the goal is at most 1.3) and each one's
// time per view, so that the load of the machine cancels out of the
// ratio.
func BenchmarkViewPaired(b *testing.B) {
	dir := b.TempDir()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	m := memtool.New(s, nil)
	benchCreate(b, m, "/memories/view/notes.md", benchFileText)
	in := benchInput(b, map[string]any{"command": "view", "path": "/memories/view/notes.md"})
	file := filepath.Join(dir, "view", "notes.md")
	want := bareView(b, file)
	if got := mustMarshal(b, benchRun(b, m, in)); !bytes.Equal(got, want) {
		b.Fatalf("memtool answers\n%s\nthe bare loop\n%s", got, want)
	}
	var tm, tb time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		mustMarshal(b, benchRun(b, m, in))
		t1 := time.Now()
		bareView(b, file)
		tb += time.Since(t1)
		tm += t1.Sub(t0)
	}
	b.ReportMetric(float64(tm)/float64(tb), "memtool/bare")
	b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N), "memtool-ns/view")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(b.N), "bare-ns/view")
}

func mustMarshal(b *testing.B, r memtool.Result) []byte {
	out, err := r.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// bareView is a file view with nothing but the work itself: read, number
// the lines, encode the answer.
func bareView(b *testing.B, file string) []byte {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("Here's the content of /memories/view/notes.md with line numbers:\n")
	for i, line := range strings.Split(string(data), "\n") {
		if i > 0 {
			sb.WriteByte('\n')
		}
		n := strconv.Itoa(i + 1)
		sb.WriteString("      "[len(n):])
		sb.WriteString(n)
		sb.WriteByte('\t')
		sb.WriteString(line)
	}
	out, err := json.Marshal(struct {
		IsError bool   `json:"is_error"`
		Content string `json:"content"`
	}{false, sb.String()})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
