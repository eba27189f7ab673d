package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
)

// # What a store holds

// historyDir is package history's directory of versions in a store.
const historyDir = versions.DirName

// policyData are the entries that policies keep beside a memory in its
// store, under names that the path gate refuses and that the file store
// and the object stores leave out of their listings, so they are looked
// for by name.
var policyData = []string{historyDir, expiry.IndexName, expiry.TrashName}

// errStopWalk ends a walkMemory early; walkMemory returns it.
var errStopWalk = errors.New("stop the walk")

// walkMemory calls fn for every directory and file of the memory in raw
// and of its policies' data, as wholeStore(raw) lists them: parents
// before their entries, in name order, the memory's entries first.
func walkMemory(ctx context.Context, raw memtool.Store, fn func(name string, fi memtool.FileInfo) error) error {
	w := &wholeView{raw}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := w.ReadDir(ctx, dir)
		if err != nil {
			return err
		}
		policy := func(e memtool.FileInfo) int {
			if dir == "" && strings.HasPrefix(e.Name, ".memtool") {
				return 1
			}
			return 0
		}
		slices.SortFunc(entries, func(a, b memtool.FileInfo) int {
			return cmp.Or(cmp.Compare(policy(a), policy(b)), strings.Compare(a.Name, b.Name))
		})
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			if err := fn(name, e); err != nil {
				return err
			}
			if e.IsDir() {
				if err := walk(name); err != nil && !errors.Is(err, memtool.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	}
	return walk("")
}

// openRawStore opens the memory that the flags name below its policies,
// for memtool rekey, which wraps it in encryption itself. A store that
// records no encryption is refused. The store it returns shows the
// memory and its policies' data as one tree (so a walk over it, as
// encrypt.Rekey does, rewrites the versions and the access index too,
// which the file store and the object stores leave out of listings) and
// leaves out the policy record, which is never encrypted.
func openRawStore(ctx context.Context, env *cliEnv, sf *storeFlags) (memtool.Store, io.Closer, error) {
	url := storeURL(sf.store, env)
	raw, closer, err := openStore(ctx, url, sf.tenant, false)
	if err != nil {
		return nil, nil, err
	}
	rec, _, found, err := readRecord(ctx, raw)
	if err == nil && found && !rec.Encrypt {
		err = fmt.Errorf("%w: it is not encrypted (its policy record says so)", errPolicy)
	}
	if err != nil {
		closer.Close()
		return nil, nil, fmt.Errorf("store %s: %w", storeLabel(url, sf.tenant), err)
	}
	return wholeStore(raw), closer, nil
}

// wholeStore returns raw with its root listing changed: every policy's
// data that is there (policyData) is listed, whether raw lists it or not,
// and the policy record is not. Another root entry starting with
// ".memtool", which some stores list, fails the listing: some policy this
// memtool does not know keeps data there, and what walks the store (a
// copy, a rekey) would leave it behind.
func wholeStore(raw memtool.Store) memtool.Store { return &wholeView{raw} }

type wholeView struct{ raw memtool.Store }

// Unwrap, Rename and RemoveAll make the view a memtool.Wrapper with the
// capabilities raw has.
func (w *wholeView) Unwrap() memtool.Store { return w.raw }

func (w *wholeView) Rename(ctx context.Context, o, n string) error {
	return memtool.ForwardRename(ctx, w.raw, o, n)
}

func (w *wholeView) RemoveAll(ctx context.Context, name string) error {
	return memtool.ForwardRemoveAll(ctx, w.raw, name)
}

func (w *wholeView) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := w.raw.ReadDir(ctx, name)
	if err != nil || name != "" {
		return entries, err
	}
	var memory []memtool.FileInfo
	for _, e := range entries {
		switch {
		case !strings.HasPrefix(e.Name, ".memtool"):
			memory = append(memory, e)
		case e.Name != recordName && !slices.Contains(policyData, e.Name):
			return nil, fmt.Errorf("the store holds %s, which this memtool does not know", e.Name)
		}
	}
	entries = memory
	for _, n := range policyData {
		fi, err := w.raw.Stat(ctx, n)
		if errors.Is(err, memtool.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		fi.Name = n
		entries = append(entries, fi)
	}
	return entries, nil
}

func (w *wholeView) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return w.raw.Stat(ctx, name)
}

func (w *wholeView) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return w.raw.ReadFile(ctx, name, limit)
}

func (w *wholeView) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return w.raw.WriteFile(ctx, name, data, mode)
}

func (w *wholeView) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return w.raw.Update(ctx, name, limit, fn)
}

func (w *wholeView) Mkdir(ctx context.Context, name string) error { return w.raw.Mkdir(ctx, name) }

func (w *wholeView) Remove(ctx context.Context, name string) error { return w.raw.Remove(ctx, name) }
