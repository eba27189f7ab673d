package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// changingStore is a test-only source that another writer changes once,
// right after migrate reads the file named on, given the file copied
// before it.
type changingStore struct {
	memtool.Store
	on, before string
	once       *sync.Once
	change     func(ctx context.Context, s memtool.Store, f string) error
}

func (s changingStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := s.Store.ReadFile(ctx, name, limit)
	if name == s.on {
		s.once.Do(func() {
			if cerr := s.change(ctx, s.Store, s.before); cerr != nil {
				panic(cerr)
			}
		})
	}
	return data, err
}

// TestMigrateSourceChangedMeanwhile: a source written while migrate
// copies it (a file added, edited to another text of the same size,
// removed or renamed after it was copied) fails the migration, naming
// what changed, and says to rerun it: migrate once verified the target
// against the bytes it had read only, and reported every file verified
// for a copy that the source no longer matched.
func TestMigrateSourceChangedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name, want string // want: the name the error gives, f the file copied first
		change     func(ctx context.Context, s memtool.Store, f string) error
	}{
		{"added", "b/new.md", func(ctx context.Context, s memtool.Store, f string) error {
			return s.WriteFile(ctx, "b/new.md", []byte("new"), memtool.CreateOnly)
		}},
		{"edited", "f", func(ctx context.Context, s memtool.Store, f string) error {
			return s.WriteFile(ctx, f, []byte("CONTENT OF "+f), memtool.Replace)
		}},
		{"removed", "f", func(ctx context.Context, s memtool.Store, f string) error {
			return s.Remove(ctx, f)
		}},
		{"renamed", "f.moved", func(ctx context.Context, s memtool.Store, f string) error {
			return memtool.ForwardRename(ctx, s, f, f+".moved")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			raw := memstore.New()
			for _, d := range []string{"a", "b"} {
				if err := raw.Mkdir(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"a/one.txt", "b/two.txt"} {
				if err := raw.WriteFile(ctx, f, []byte("content of "+f), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			p, err := planCopy(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			src := changingStore{raw, p.files[1], p.files[0], new(sync.Once), c.change}
			want := shownName(strings.Replace(c.want, "f", p.files[0], 1))
			_, err = copyStore(ctx, src, memstore.New(), p, false, newProgress(new(bytes.Buffer), len(p.files), p.bytes))
			if err == nil || !strings.Contains(err.Error(), "the source changed during the migration") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--force") {
				t.Errorf("a source with a file %s meanwhile: %v, want an error naming %s", c.name, err, want)
			}
		})
	}
}
