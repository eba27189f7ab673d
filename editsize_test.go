package memtool_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// readCounter counts the calls that read a file's content: ReadFile, and
// Update when it hands the content to its function (an Update refused
// from the size, ErrTooLarge, read nothing).
type readCounter struct {
	memtool.Store
	reads atomic.Int64
}

func (s *readCounter) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	s.reads.Add(1)
	return s.Store.ReadFile(ctx, name, limit)
}

func (s *readCounter) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return s.Store.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		s.reads.Add(1)
		return fn(old)
	})
}

// An edit whose result would be over MaxFileSize is refused from the
// file's size, before the file is read, with the text the refusal after
// reading gives; an edit that fits still reads and succeeds.
func TestOverLimitEditRefusedFromSize(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	big := strings.Repeat("0123456789abcde\n", 1<<12) + "needle" // 65,542 bytes
	if err := inner.WriteFile(ctx, "big.md", []byte(big), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := &readCounter{Store: inner}
	mem := memtool.New(s, &memtool.Options{MaxFileSize: 65540})
	for _, tc := range []struct {
		kv   []string
		size int
	}{
		{[]string{"command", "str_replace", "path", "/memories/big.md", "old_str", "needle", "new_str", "a longer needle"}, len(big) + 9},
		{[]string{"command", "insert", "path", "/memories/big.md", "insert_line", "1", "insert_text", "one more line\n"}, len(big) + 14},
	} {
		in := map[string]any{}
		for i := 0; i < len(tc.kv); i += 2 {
			in[tc.kv[i]] = tc.kv[i+1]
		}
		if tc.kv[1] == "insert" {
			in["insert_line"] = 1
		}
		input, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		r := mem.Run(ctx, input)
		want := "Error: File content is too large: " + strconv.Itoa(tc.size) + " bytes, more than the limit of 65540 bytes. Nothing was written."
		if r.Text != want {
			t.Errorf("%s = %q, want %q", tc.kv[1], r.Text, want)
		}
		if n := s.reads.Swap(0); n != 0 {
			t.Errorf("%s read the file %d times before refusing", tc.kv[1], n)
		}
	}
	r := do(mem, "command", "str_replace", "path", "/memories/big.md", "old_str", "needle", "new_str", "pin")
	if r.IsError || s.reads.Load() == 0 {
		t.Errorf("an edit that shrinks the file: %q (reads %d)", r.Text, s.reads.Load())
	}
}

// statCounter counts Stat calls besides the reads.
type statCounter struct {
	readCounter
	stats atomic.Int64
}

func (s *statCounter) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, name)
}

// A file view is one store call: the read.
func TestFileViewIsOneStoreCall(t *testing.T) {
	inner := memstore.New()
	if err := inner.WriteFile(context.Background(), "f.md", []byte("a\nb"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := &statCounter{readCounter: readCounter{Store: inner}}
	r := do(memtool.New(s, nil), "command", "view", "path", "/memories/f.md")
	if r.Text != "Here's the content of /memories/f.md with line numbers:\n     1\ta\n     2\tb" {
		t.Errorf("view = %q", r.Text)
	}
	if s.reads.Load() != 1 || s.stats.Load() != 0 {
		t.Errorf("a file view made %d reads and %d Stat calls, want 1 and 0", s.reads.Load(), s.stats.Load())
	}
}
