package storetest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// RunReadForwarding checks a wrapper whose Stat, ReadFile and ReadDir pass
// entries through unchanged, and which therefore opts in to the reading
// capabilities (memtool.DirLister, NameLister and FileOpener) by
// forwarding them. Over inner, which must have all three, the wrapper has
// them and answers as inner does: views through memtool.Memory of a
// directory larger than a view shows and of a large file are the views
// over inner, ListDir and ListNames give inner's names, OpenFile its
// bytes. Over Bare(inner) the wrapper has none of them, and each answers
// ErrUnsupported.
func RunReadForwarding(t *testing.T, inner memtool.Store, wrap func(memtool.Store) memtool.Store) {
	t.Helper()
	ctx := t.Context()
	if !memtool.Has[memtool.DirLister](inner) || !memtool.Has[memtool.NameLister](inner) || !memtool.Has[memtool.FileOpener](inner) {
		t.Fatalf("%T lacks a reading capability", inner)
	}
	w := wrap(inner)
	for name, has := range map[string]bool{
		"DirLister":  memtool.Has[memtool.DirLister](w),
		"NameLister": memtool.Has[memtool.NameLister](w),
		"FileOpener": memtool.Has[memtool.FileOpener](w),
	} {
		if !has {
			t.Errorf("%T over %T: not a %s", w, inner, name)
		}
	}
	mustMkdir(t, inner, "big")
	for i := range 1500 {
		mustWrite(t, inner, fmt.Sprintf("big/n%04d.md", 1499-i), "x")
	}
	large := strings.Repeat("a line of the large file\n", 80_000) // 2 MB
	mustWrite(t, inner, "large.md", large)
	for _, in := range []string{
		`{"command":"view","path":"/memories/big"}`,
		`{"command":"view","path":"/memories/large.md"}`,
		`{"command":"view","path":"/memories/large.md","view_range":[40000,40005]}`,
	} {
		got := memtool.New(w, nil).Run(ctx, []byte(in))
		want := memtool.New(inner, nil).Run(ctx, []byte(in))
		if got != want || got.IsError {
			t.Errorf("%s through %T:\n%.300s\nwithout it:\n%.300s", in, w, got.Text, want.Text)
		}
	}
	names := 0
	entries, many, err := w.(memtool.DirLister).ListDir(ctx, "big", 10, func(string) bool { names++; return true })
	if err != nil || !many || entries != nil || names != 1500 {
		t.Errorf("ListDir(big, 10): %d entries, many %v, %d names, %v; want the 1500 names", len(entries), many, names, err)
	}
	names = 0
	wantNoErr(t, "ListNames(big)", w.(memtool.NameLister).ListNames(ctx, "big", func(string) bool { names++; return true }))
	if names != 1500 {
		t.Errorf("ListNames(big) gave %d names, want 1500", names)
	}
	r, size, err := w.(memtool.FileOpener).OpenFile(ctx, "large.md", 1<<30)
	wantNoErr(t, "OpenFile(large.md)", err)
	if err == nil {
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != large || size != int64(len(large)) {
			t.Errorf("OpenFile(large.md): %d bytes (size %d), %v; want the file", len(b), size, err)
		}
	}

	bare := wrap(Bare(inner))
	for name, has := range map[string]bool{
		"DirLister":  memtool.Has[memtool.DirLister](bare),
		"NameLister": memtool.Has[memtool.NameLister](bare),
		"FileOpener": memtool.Has[memtool.FileOpener](bare),
	} {
		if has {
			t.Errorf("Has[%s] over a store without it", name)
		}
	}
	_, _, err = bare.(memtool.DirLister).ListDir(ctx, "big", 10, func(string) bool { return true })
	WantErr(t, "ListDir over a bare store", err, errors.ErrUnsupported)
	WantErr(t, "ListNames over a bare store", bare.(memtool.NameLister).ListNames(ctx, "big", func(string) bool { return true }), errors.ErrUnsupported)
	_, _, err = bare.(memtool.FileOpener).OpenFile(ctx, "large.md", 1<<30)
	WantErr(t, "OpenFile over a bare store", err, errors.ErrUnsupported)
}
