package history

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
)

// hooked is a memstore with a rename, whose Mkdir, Remove and Rename
// first ask a hook, if set, which may answer instead of the store (done).
type hooked struct {
	memtool.Store
	mkdir  func(name string) (done bool, err error)
	remove func(name string) (done bool, err error)
	rename func(oldname, newname string) (done bool, err error)
}

func newHooked() *hooked { return &hooked{Store: memstore.New()} }

func (s *hooked) Mkdir(ctx context.Context, name string) error {
	if s.mkdir != nil {
		if done, err := s.mkdir(name); done {
			return err
		}
	}
	return s.Store.Mkdir(ctx, name)
}

func (s *hooked) Remove(ctx context.Context, name string) error {
	if s.remove != nil {
		if done, err := s.remove(name); done {
			return err
		}
	}
	return s.Store.Remove(ctx, name)
}

func (s *hooked) Rename(ctx context.Context, oldname, newname string) error {
	if s.rename != nil {
		if done, err := s.rename(oldname, newname); done {
			return err
		}
	}
	return memtool.ForwardRename(ctx, s.Store, oldname, newname)
}

// inTrash reports whether name is a trash directory (a slot), or an entry
// of one called base ("" any).
func inTrash(name, base string) bool {
	rest, ok := strings.CutPrefix(name, trashDir+"/")
	if !ok {
		return false
	}
	slot, entry, _ := strings.Cut(rest, "/")
	return slot != "" && entry == base
}

func trashLeft(t *testing.T, inner memtool.Store) []string {
	t.Helper()
	entries, err := inner.ReadDir(context.Background(), trashDir)
	if err != nil && !errors.Is(err, memtool.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// TestLeftSlotsReclaimed: a trash directory that no delete will fill,
// left by a lost answer to its creation or by a failed removal once it
// was emptied, is removed by a later delete's sweep once it is old
// enough, and not before. Before, nothing removed such a directory: it
// cannot be told from one whose delete is about to move its tree in.
func TestLeftSlotsReclaimed(t *testing.T) {
	ctx := context.Background()
	lost := fmt.Errorf("mkdir: %w", memtool.ErrOutcomeUnknown)
	for _, c := range []struct {
		name  string
		fault func(inner *hooked)
		// failed: the delete fails (else it succeeds and keeps a version).
		failed bool
	}{
		{"lost answer to the slot's creation", func(inner *hooked) {
			inner.mkdir = func(name string) (bool, error) {
				if !inTrash(name, "") {
					return false, nil
				}
				inner.mkdir = nil
				inner.remove = func(string) (bool, error) { return true, errors.New("offline") }
				return true, errors.Join(inner.Store.Mkdir(ctx, name), lost)
			}
		}, true},
		{"failed removal of an emptied slot's path", func(inner *hooked) {
			inner.remove = func(name string) (bool, error) {
				if !inTrash(name, pathFile) {
					return false, nil
				}
				inner.remove = nil
				return true, errors.New("offline")
			}
		}, false},
		{"failed removal of an emptied slot", func(inner *hooked) {
			inner.remove = func(name string) (bool, error) {
				if !inTrash(name, "") {
					return false, nil
				}
				inner.remove = nil
				return true, errors.New("offline")
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := newHooked()
			now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			s := New(inner, &Options{Now: func() time.Time { return now }})
			must.Succeed(t, s.WriteFile(ctx, "a", []byte("A"), memtool.CreateOnly))
			must.Succeed(t, s.WriteFile(ctx, "b", []byte("B"), memtool.CreateOnly))
			must.Succeed(t, s.WriteFile(ctx, "c", []byte("C"), memtool.CreateOnly))
			c.fault(inner)
			if err := s.Remove(ctx, "a"); (err != nil) != c.failed {
				t.Fatalf("delete: %v", err)
			}
			inner.mkdir, inner.remove = nil, nil
			if len(trashLeft(t, inner)) == 0 {
				t.Skip("nothing left in the trash") // cleaned up at once
			}
			now = now.Add(time.Minute)
			must.Succeed(t, s.Remove(ctx, "b"))
			if left := trashLeft(t, inner); len(left) != 1 {
				t.Errorf("a minute later, the trash holds %q; want the fresh directory left alone", left)
			}
			now = now.Add(staleSlot)
			must.Succeed(t, s.Remove(ctx, "c"))
			if left := trashLeft(t, inner); len(left) != 0 {
				t.Errorf("once stale, the trash still holds %q", left)
			}
			want := []string{"1 delete A"}
			if c.failed {
				want = nil
				if data, err := s.ReadFile(ctx, "a", 10); string(data) != "A" {
					t.Errorf("after the failed delete, a holds %q, %v", data, err)
				}
			}
			if got := texts(t, inner, "a"); !reflect.DeepEqual(got, want) {
				t.Errorf("versions of a: %q, want %q", got, want)
			}
		})
	}
}

// TestReclaimRacingDelete: a sweep whose clock takes a delete still in
// progress for stale loses nothing: if it gets to the trash directory
// before the delete moves the file in, the delete starts over in a new
// one; if the move lands first, the sweep keeps the file as a version.
// Either way the delete succeeds, the file is kept once, and the trash
// ends empty.
func TestReclaimRacingDelete(t *testing.T) {
	ctx := context.Background()
	for _, moveFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("move first %v", moveFirst), func(t *testing.T) {
			mem := memstore.New()
			innerA, innerB := &hooked{Store: mem}, &hooked{Store: mem}
			now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			a := New(innerA, &Options{Now: func() time.Time { return now }})
			b := New(innerB, &Options{Now: func() time.Time { return now.Add(2 * staleSlot) }}) // runs ahead
			must.Succeed(t, a.WriteFile(ctx, "a", []byte("A"), memtool.CreateOnly))
			must.Succeed(t, b.WriteFile(ctx, "x", []byte("X"), memtool.CreateOnly))
			raced := false
			innerA.rename = func(oldname, newname string) (bool, error) {
				if oldname != "a" || raced {
					return false, nil
				}
				raced = true
				if !moveFirst {
					must.Succeed(t, b.Remove(ctx, "x")) // sweeps a's slot first
					return false, nil
				}
				// b's sweep looks at a's slot, a's move lands, and then
				// b takes the slot away.
				var moved error
				innerB.rename = func(bold, _ string) (bool, error) {
					if bold == path.Dir(newname) && innerB.rename != nil {
						innerB.rename = nil
						moved = memtool.ForwardRename(ctx, mem, oldname, newname)
					}
					return false, nil
				}
				must.Succeed(t, b.Remove(ctx, "x"))
				if innerB.rename != nil {
					t.Fatal("b's sweep did not take a's trash directory")
				}
				return true, moved
			}
			must.Succeed(t, a.Remove(ctx, "a"))
			if !raced {
				t.Fatal("no race")
			}
			if _, err := mem.Stat(ctx, "a"); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("a after its delete: %v", err)
			}
			if got := texts(t, mem, "a"); !reflect.DeepEqual(got, []string{"1 delete A"}) {
				t.Errorf("versions of a: %q", got)
			}
			if got := texts(t, mem, "x"); !reflect.DeepEqual(got, []string{"1 delete X"}) {
				t.Errorf("versions of x: %q", got)
			}
			if left := trashLeft(t, mem); len(left) != 0 {
				t.Errorf("the trash holds %q", left)
			}
		})
	}
}
