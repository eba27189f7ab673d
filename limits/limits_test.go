package limits_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// generous limits that the conformance suite never reaches, so that every
// check runs on every operation without refusing any.
var generous = limits.Options{MaxFileSize: 1 << 30, MaxFiles: 1 << 20, MaxBytes: 1 << 40, MaxPathLength: 4096, MaxDepth: 64}

// walled are limits that the conformance suite never reaches and that the
// refusals below cross.
var walled = limits.Options{MaxFileSize: 1 << 20, MaxFiles: 1 << 10, MaxBytes: 1 << 26, MaxPathLength: 200, MaxDepth: 8}

func TestWrapper(t *testing.T) {
	deep := "a/b/c/d/e/f/g"
	refusals := []storetest.Refusal{
		{Name: "FileSize", Do: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "big", make([]byte, walled.MaxFileSize+1), memtool.CreateOnly)
		}},
		{Name: "FileSizeByUpdate", Setup: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "f", []byte("small"), memtool.CreateOnly)
		}, Do: func(ctx context.Context, s memtool.Store) error {
			return s.Update(ctx, "f", 1<<30, func([]byte) ([]byte, error) { return make([]byte, walled.MaxFileSize+1), nil })
		}},
		{Name: "PathLength", Do: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, strings.Repeat("n", walled.MaxPathLength), []byte("x"), memtool.CreateOnly)
		}},
		{Name: "Depth", Setup: func(ctx context.Context, s memtool.Store) error {
			_, err := memtool.MkdirAll(ctx, s, deep+"/h")
			return err
		}, Do: func(ctx context.Context, s memtool.Store) error {
			return s.Mkdir(ctx, deep+"/h/i")
		}},
		{Name: "DepthByRename", Setup: func(ctx context.Context, s memtool.Store) error {
			if _, err := memtool.MkdirAll(ctx, s, deep); err != nil {
				return err
			}
			if err := s.Mkdir(ctx, "x"); err != nil {
				return err
			}
			return s.WriteFile(ctx, "x/f", []byte("x"), memtool.CreateOnly)
		}, Do: func(ctx context.Context, s memtool.Store) error {
			return s.(memtool.Renamer).Rename(ctx, "x", deep+"/y")
		}},
	}
	backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store { return limits.New(inner, &walled) }, refusals)
}

func run(t *testing.T, mem *memtool.Memory, input string) memtool.Result {
	t.Helper()
	return mem.Run(context.Background(), []byte(input))
}

func cmd(command, p string, kv ...string) string {
	m := map[string]any{"command": command, "path": p}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestLimits drives each limit from just below to just above, through
// Memory, on both stores: at the limit the command succeeds; one past it
// the command fails with the message naming the limit and the excess, and
// the store is unchanged.
func TestLimits(t *testing.T) {
	type step struct {
		input  string
		refuse string // "" for success, else the exact error text
	}
	cases := []struct {
		name  string
		opts  limits.Options
		setup []string
		steps []step
	}{
		{
			name: "file size by create",
			opts: limits.Options{MaxFileSize: 10},
			steps: []step{
				{cmd("create", "/memories/a.txt", "file_text", "0123456789"), ""},
				{cmd("create", "/memories/d/b.txt", "file_text", "0123456789A"), "Error: Limit exceeded (file size): /memories/d/b.txt would be 11 bytes, 1 byte over the limit of 10 bytes. Nothing was changed."},
			},
		},
		{
			name:  "file size by str_replace",
			opts:  limits.Options{MaxFileSize: 10},
			setup: []string{cmd("create", "/memories/a.txt", "file_text", "01234567")},
			steps: []step{
				{cmd("str_replace", "/memories/a.txt", "old_str", "7", "new_str", "789"), ""},
				{cmd("str_replace", "/memories/a.txt", "old_str", "9", "new_str", "9AB"), "Error: Limit exceeded (file size): /memories/a.txt would be 12 bytes, 2 bytes over the limit of 10 bytes. Nothing was changed."},
			},
		},
		{
			name:  "file size by insert",
			opts:  limits.Options{MaxFileSize: 10},
			setup: []string{cmd("create", "/memories/a.txt", "file_text", "0123")},
			steps: []step{
				{`{"command":"insert","path":"/memories/a.txt","insert_line":1,"insert_text":"5678"}`, ""},
				{`{"command":"insert","path":"/memories/a.txt","insert_line":0,"insert_text":""}`, ""},
				{`{"command":"insert","path":"/memories/a.txt","insert_line":0,"insert_text":""}`, "Error: Limit exceeded (file size): /memories/a.txt would be 11 bytes, 1 byte over the limit of 10 bytes. Nothing was changed."},
			},
		},
		{
			name:  "files",
			opts:  limits.Options{MaxFiles: 3},
			setup: []string{cmd("create", "/memories/d/a.txt", "file_text", "a")},
			steps: []step{
				{cmd("create", "/memories/b.txt", "file_text", "b"), ""},
				{cmd("create", "/memories/c.txt", "file_text", "c"), "Error: Limit exceeded (files): The store would hold 4 files and directories, 1 file or directory over the limit of 3 files and directories. Nothing was changed."},
				{cmd("create", "/memories/e/c.txt", "file_text", "c"), "Error: Limit exceeded (files): The store would hold 4 files and directories, 1 file or directory over the limit of 3 files and directories. Nothing was changed."},
			},
		},
		{
			name:  "files counts the parent directories a create makes",
			opts:  limits.Options{MaxFiles: 3},
			setup: []string{cmd("create", "/memories/a.txt", "file_text", "a")},
			steps: []step{
				{cmd("create", "/memories/x/y/c.txt", "file_text", "c"), "Error: Limit exceeded (files): The store would hold 4 files and directories, 1 file or directory over the limit of 3 files and directories. Nothing was changed."},
				{cmd("create", "/memories/x/c.txt", "file_text", "c"), ""},
			},
		},
		{
			name:  "store size by create",
			opts:  limits.Options{MaxBytes: 10},
			setup: []string{cmd("create", "/memories/a.txt", "file_text", "01234")},
			steps: []step{
				{cmd("create", "/memories/b.txt", "file_text", "56789"), ""},
				{cmd("create", "/memories/c.txt", "file_text", "x"), "Error: Limit exceeded (store size): The store would hold 11 bytes, 1 byte over the limit of 10 bytes. Nothing was changed."},
			},
		},
		{
			name:  "store size by str_replace",
			opts:  limits.Options{MaxBytes: 10},
			setup: []string{cmd("create", "/memories/a.txt", "file_text", "01234"), cmd("create", "/memories/b.txt", "file_text", "567")},
			steps: []step{
				{cmd("str_replace", "/memories/b.txt", "old_str", "7", "new_str", "789"), ""},
				{cmd("str_replace", "/memories/b.txt", "old_str", "9", "new_str", "9AB"), "Error: Limit exceeded (store size): The store would hold 12 bytes, 2 bytes over the limit of 10 bytes. Nothing was changed."},
				{cmd("str_replace", "/memories/b.txt", "old_str", "89", "new_str", "8"), ""},
			},
		},
		{
			name: "path length",
			opts: limits.Options{MaxPathLength: 20},
			steps: []step{
				{cmd("create", "/memories/abcdefghij", "file_text", "x"), ""},
				{cmd("create", "/memories/abcdefghijk", "file_text", "x"), "Error: Limit exceeded (path length): The path /memories/abcdefghijk is 21 bytes long, 1 byte over the limit of 20 bytes. Nothing was changed."},
				{cmd("create", "/memories/ab/cdefghijk", "file_text", "x"), "Error: Limit exceeded (path length): The path /memories/ab/cdefghijk is 22 bytes long, 2 bytes over the limit of 20 bytes. Nothing was changed."},
			},
		},
		{
			name:  "path length by renaming a directory",
			opts:  limits.Options{MaxPathLength: 20},
			setup: []string{cmd("create", "/memories/d/abcdefgh", "file_text", "x")},
			steps: []step{
				{`{"command":"rename","old_path":"/memories/d","new_path":"/memories/ee"}`, "Error: Limit exceeded (path length): The path /memories/ee/abcdefgh is 21 bytes long, 1 byte over the limit of 20 bytes. Nothing was changed."},
				{`{"command":"rename","old_path":"/memories/d","new_path":"/memories/e"}`, ""},
			},
		},
		{
			name: "depth",
			opts: limits.Options{MaxDepth: 3},
			steps: []step{
				{cmd("create", "/memories/a/b/c", "file_text", "x"), ""},
				{cmd("create", "/memories/a/b/c2/d", "file_text", "x"), "Error: Limit exceeded (depth): The path /memories/a/b/c2/d is 4 levels deep, 1 level over the limit of 3 levels. Nothing was changed."},
				{cmd("create", "/memories/x/y/z/w", "file_text", "x"), "Error: Limit exceeded (depth): The path /memories/x/y/z/w is 4 levels deep, 1 level over the limit of 3 levels. Nothing was changed."},
				{`{"command":"rename","old_path":"/memories/a/b","new_path":"/memories/a/b2/b"}`, "Error: Limit exceeded (depth): The path /memories/a/b2/b/c is 4 levels deep, 1 level over the limit of 3 levels. Nothing was changed."},
				{`{"command":"rename","old_path":"/memories/a/b","new_path":"/memories/b"}`, ""},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
				store := limits.New(inner, &c.opts)
				mem := memtool.New(store, nil)
				for _, in := range c.setup {
					if r := run(t, mem, in); r.IsError {
						t.Fatalf("setup %s: %s", in, r.Text)
					}
				}
				for _, st := range c.steps {
					before := storetest.Snapshot(t, inner)
					r := run(t, mem, st.input)
					if st.refuse == "" {
						if r.IsError {
							t.Errorf("%s: want success, got %s", st.input, r.Text)
						}
						continue
					}
					if !r.IsError || r.Text != st.refuse {
						t.Errorf("%s:\n got %v %q\nwant %q", st.input, r.IsError, r.Text, st.refuse)
					}
					if after := storetest.Snapshot(t, inner); !reflect.DeepEqual(before, after) {
						t.Errorf("%s: refused but the store changed:\nbefore %v\nafter  %v", st.input, before, after)
					}
				}
			})
		})
	}
}

// TestErrorType checks the refusal a caller of the Store (not Memory) gets.
func TestErrorType(t *testing.T) {
	s := limits.New(memstore.New(), &limits.Options{MaxFileSize: 3})
	err := s.WriteFile(context.Background(), "a", []byte("abcd"), memtool.CreateOnly)
	var le *limits.Error
	if !errors.As(err, &le) || le.Limit != limits.FileSize || le.Got != 4 || le.Max != 3 || le.Path != "/memories/a" {
		t.Fatalf("got %#v", err)
	}
	for _, class := range []error{memtool.ErrExist, memtool.ErrNotExist, memtool.ErrTooLarge} {
		if errors.Is(err, class) {
			t.Errorf("a limit refusal is %v", class)
		}
	}
}

// TestOverLimitMayShrink: a file over a lowered limit may be edited if it
// does not grow.
func TestOverLimitMayShrink(t *testing.T) {
	inner := memstore.New()
	if err := inner.WriteFile(context.Background(), "a", []byte("0123456789"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	mem := memtool.New(limits.New(inner, &limits.Options{MaxFileSize: 5, MaxBytes: 5}), nil)
	if r := run(t, mem, cmd("str_replace", "/memories/a", "old_str", "0", "new_str", "")); r.IsError {
		t.Errorf("shrinking an oversized file: %s", r.Text)
	}
	if r := run(t, mem, cmd("str_replace", "/memories/a", "old_str", "1", "new_str", "11")); !r.IsError {
		t.Errorf("growing an oversized file was allowed")
	}
}

// TestBattery replays the reference battery's commands through Memory on
// memstore with and without the wrapper. With every limit set to the peak
// the battery reaches, the answers are identical; with every limit one
// below it, the answers are identical up to the first refusal, which is a
// limit refusal.
func TestBattery(t *testing.T) {
	inputs := battery.Inputs(t)
	plain := memtool.New(memstore.New(), nil)
	var want []memtool.Result
	peak := limits.Options{}
	plainStore := plain.Store()
	for _, in := range inputs {
		want = append(want, plain.Run(context.Background(), in))
		measure(t, plainStore, &peak)
	}
	if peak.MaxFiles < 5 || peak.MaxDepth < 3 {
		t.Fatalf("the battery reaches implausibly little: %+v", peak)
	}
	t.Logf("peak: %+v", peak)

	wrapped := memtool.New(limits.New(memstore.New(), &peak), nil)
	for i, in := range inputs {
		if got := wrapped.Run(context.Background(), in); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("at the peak limits, %s:\n got %+v\nwant %+v", in, got, want[i])
		}
	}

	for _, limit := range []string{limits.FileSize, limits.Files, limits.Bytes, limits.PathLength, limits.Depth} {
		opts := peak
		switch limit {
		case limits.FileSize:
			opts.MaxFileSize--
		case limits.Files:
			opts.MaxFiles--
		case limits.Bytes:
			opts.MaxBytes--
		case limits.PathLength:
			opts.MaxPathLength--
		case limits.Depth:
			opts.MaxDepth--
		}
		tight := memtool.New(limits.New(memstore.New(), &opts), nil)
		refused := false
		for i, in := range inputs {
			got := tight.Run(context.Background(), in)
			if reflect.DeepEqual(got, want[i]) {
				continue
			}
			if !got.IsError || !strings.HasPrefix(got.Text, "Error: Limit exceeded ("+limit+")") {
				t.Errorf("%s one below the peak: first difference is not a %s refusal: %s:\n got %+v\nwant %+v", limit, limit, in, got, want[i])
			}
			refused = true
			break
		}
		if !refused {
			t.Errorf("%s one below the peak: nothing was refused", limit)
		}
	}
}

// measure raises peak to what the store holds now.
func measure(t *testing.T, s memtool.Store, peak *limits.Options) {
	var files, bytes int64
	for p, content := range storetest.Snapshot(t, s) {
		files++
		vp := memtool.VirtualPath(p)
		peak.MaxPathLength = max(peak.MaxPathLength, len(vp))
		peak.MaxDepth = max(peak.MaxDepth, strings.Count(p, "/")+1)
		if content, ok := strings.CutPrefix(content, "file:"); ok {
			bytes += int64(len(content))
			peak.MaxFileSize = max(peak.MaxFileSize, int64(len(content)))
		}
	}
	peak.MaxFiles = max(peak.MaxFiles, files)
	peak.MaxBytes = max(peak.MaxBytes, bytes)
}

// batteryInputs returns the tool inputs of the reference battery, without
// its setup lines (which act on a directory, not through Memory).

// ---- benchmarks ----

// BenchmarkCreate (a create and a delete) and BenchmarkEdit (a str_replace)
// measure commands through Memory on a store holding 100 files of 4 KiB in
// 10 directories, without and with the wrapper (all limits on).
func BenchmarkCreate(b *testing.B) { benchCommand(b, false) }
func BenchmarkEdit(b *testing.B)   { benchCommand(b, true) }

func benchCommand(b *testing.B, edit bool) {
	text := strings.Repeat("abcdefghijklmno\n", 256) // 4 KiB
	for _, backend := range backendtest.Local() {
		for _, wrapped := range []bool{false, true} {
			name := backend.Name + "/plain"
			if wrapped {
				name = backend.Name + "/limits"
			}
			b.Run(name, func(b *testing.B) {
				inner := backend.Open(b)
				store := inner
				if wrapped {
					store = limits.New(inner, &generous)
				}
				mem := memtool.New(store, nil)
				for i := range 100 {
					if r := mem.Run(context.Background(), []byte(cmd("create", fmt.Sprintf("/memories/d%d/f%d.md", i%10, i), "file_text", "MARK0\n"+text))); r.IsError {
						b.Fatal(r.Text)
					}
				}
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					var in string
					if edit {
						in = cmd("str_replace", "/memories/d0/f0.md", "old_str", fmt.Sprint("MARK", i%2), "new_str", fmt.Sprint("MARK", (i+1)%2))
					} else {
						// Create and delete, so that the store keeps its size.
						in = cmd("create", "/memories/new/f.md", "file_text", text)
						if r := mem.Run(context.Background(), []byte(in)); r.IsError {
							b.Fatal(r.Text)
						}
						in = cmd("delete", "/memories/new")
					}
					if r := mem.Run(context.Background(), []byte(in)); r.IsError {
						b.Fatal(r.Text)
					}
				}
			})
		}
	}
}

// rootLister counts the walks of the whole store: ReadDir of its root.
type rootLister struct {
	memtool.Store
	walks int
}

func (s *rootLister) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if name == "" {
		s.walks++
	}
	return s.Store.ReadDir(ctx, name)
}

// The doc's cost: with MaxFiles and MaxBytes on, a file write or an edit
// walks the store at most once, so does a new directory; reads and removes
// walk nothing.
func TestWalks(t *testing.T) {
	ctx := context.Background()
	inner := &rootLister{Store: memstore.New()}
	s := limits.New(inner, &limits.Options{MaxFiles: 100, MaxBytes: 1 << 20})
	for _, step := range []struct {
		what string
		max  int
		do   func() error
	}{
		{"mkdir", 1, func() error { return s.Mkdir(ctx, "d") }},
		{"create", 1, func() error { return s.WriteFile(ctx, "d/f", []byte("one"), memtool.CreateOnly) }},
		{"replace", 1, func() error { return s.WriteFile(ctx, "d/f", []byte("two"), memtool.Replace) }},
		{"edit", 1, func() error {
			return s.Update(ctx, "d/f", 1<<20, func(old []byte) ([]byte, error) { return append(old, '!'), nil })
		}},
		{"read", 0, func() error { _, err := s.ReadFile(ctx, "d/f", 1<<20); return err }},
		{"stat", 0, func() error { _, err := s.Stat(ctx, "d/f"); return err }},
		{"list", 0, func() error { _, err := s.ReadDir(ctx, "d"); return err }},
		{"remove", 0, func() error { return s.Remove(ctx, "d/f") }},
	} {
		inner.walks = 0
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if inner.walks > step.max {
			t.Errorf("%s walked the store %d times, want at most %d", step.what, inner.walks, step.max)
		}
	}
}

// Limits check writes alone and pass reads through, so the wrapper keeps
// the directory store's ways of reading: listing by names, streaming a
// file.
func TestReadForwarding(t *testing.T) {
	storetest.RunReadForwarding(t, backendtest.FileStore(t), func(s memtool.Store) memtool.Store {
		return limits.New(s, &limits.Options{MaxFileSize: 1 << 10, MaxFiles: 10})
	})
}

// An edit adds no entry: with MaxFiles alone it walks nothing, and waits
// for no counted write.
func TestEditUncountedByMaxFiles(t *testing.T) {
	ctx := context.Background()
	inner := &rootLister{Store: memstore.New()}
	s := limits.New(inner, &limits.Options{MaxFiles: 100})
	if err := s.WriteFile(ctx, "f", []byte("one"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	inner.walks = 0
	if err := s.Update(ctx, "f", 1<<20, func(old []byte) ([]byte, error) { return append(old, '!'), nil }); err != nil {
		t.Fatal(err)
	}
	if inner.walks != 0 {
		t.Errorf("an edit with MaxFiles alone walked the store %d times", inner.walks)
	}
}
