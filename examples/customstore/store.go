package main

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/memtool/memtool"
)

// mapStore is a memtool.Store kept in a Go map: the smallest complete
// backend, to copy for a database, a key-value store or an API. Every
// method runs under one mutex (see do), which makes it atomic and
// linearizable. It passes the conformance suite (storetest), which
// store_test.go runs.
type mapStore struct {
	mu      sync.Mutex
	entries map[string]*entry // by name; the root "" is implicit
}

type entry struct {
	dir  bool
	data []byte
}

func newMapStore() *mapStore { return &mapStore{entries: map[string]*entry{}} }

var _ memtool.Store = (*mapStore)(nil)

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// lookup returns the entry at name; the root is a directory.
func (s *mapStore) lookup(name string) (*entry, bool) {
	if name == "" {
		return &entry{dir: true}, true
	}
	e, ok := s.entries[name]
	return e, ok
}

// checkParent returns nil if the parent of name is a directory.
func (s *mapStore) checkParent(op, name string) error {
	parent := path.Dir(name)
	if parent == "." {
		return nil
	}
	e, ok := s.entries[parent]
	switch {
	case !ok:
		return pathErr(op, name, memtool.ErrNotExist)
	case !e.dir:
		return pathErr(op, name, memtool.ErrNotDir)
	}
	return nil
}

func info(name string, e *entry) memtool.FileInfo {
	if e.dir {
		return memtool.FileInfo{Name: path.Base(name), Type: fs.ModeDir}
	}
	return memtool.FileInfo{Name: path.Base(name), Size: int64(len(e.data))}
}

// do runs fn holding the store's mutex, unless ctx is done already. A
// database would run fn in a transaction instead.
func (s *mapStore) do(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn()
}

func (s *mapStore) Stat(ctx context.Context, name string) (fi memtool.FileInfo, err error) {
	err = s.do(ctx, func() error {
		e, ok := s.lookup(name)
		if !ok {
			return pathErr("stat", name, memtool.ErrNotExist)
		}
		fi = info(name, e)
		if name == "" {
			fi.Name = ""
		}
		return nil
	})
	return fi, err
}

func (s *mapStore) read(op, name string, limit int64) ([]byte, error) {
	e, ok := s.lookup(name)
	switch {
	case !ok:
		return nil, pathErr(op, name, memtool.ErrNotExist)
	case e.dir:
		return nil, pathErr(op, name, memtool.ErrIsDir)
	case int64(len(e.data)) > limit:
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	}
	return e.data, nil
}

func (s *mapStore) ReadFile(ctx context.Context, name string, limit int64) (data []byte, err error) {
	err = s.do(ctx, func() error {
		data, err = s.read("read", name, limit)
		data = append([]byte(nil), data...)
		return err
	})
	return data, err
}

func (s *mapStore) ReadDir(ctx context.Context, name string) (out []memtool.FileInfo, err error) {
	err = s.do(ctx, func() error {
		e, ok := s.lookup(name)
		switch {
		case !ok:
			return pathErr("readdir", name, memtool.ErrNotExist)
		case !e.dir:
			return pathErr("readdir", name, memtool.ErrNotDir)
		}
		for child, ce := range s.entries {
			if path.Dir(child) == name || (name == "" && !strings.Contains(child, "/")) {
				out = append(out, info(child, ce))
			}
		}
		return nil
	})
	return out, err
}

func (s *mapStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return s.do(ctx, func() error {
		if err := s.checkParent("write", name); err != nil {
			return err
		}
		if e, ok := s.lookup(name); ok {
			switch {
			case mode == memtool.CreateOnly:
				return pathErr("write", name, memtool.ErrExist)
			case e.dir:
				return pathErr("write", name, memtool.ErrIsDir)
			}
		}
		s.entries[name] = &entry{data: append([]byte(nil), data...)}
		return nil
	})
}

func (s *mapStore) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	return s.do(ctx, func() error {
		old, err := s.read("update", name, limit)
		if err != nil {
			return err
		}
		data, err := fn(append([]byte(nil), old...))
		if err != nil {
			return err
		}
		s.entries[name] = &entry{data: append([]byte(nil), data...)}
		return nil
	})
}

func (s *mapStore) Mkdir(ctx context.Context, name string) error {
	return s.do(ctx, func() error {
		if err := s.checkParent("mkdir", name); err != nil {
			return err
		}
		if _, ok := s.lookup(name); ok {
			return pathErr("mkdir", name, memtool.ErrExist)
		}
		s.entries[name] = &entry{dir: true}
		return nil
	})
}

func (s *mapStore) Remove(ctx context.Context, name string) error {
	return s.do(ctx, func() error {
		e, ok := s.entries[name]
		if !ok {
			return pathErr("remove", name, memtool.ErrNotExist)
		}
		if e.dir {
			for child := range s.entries {
				if strings.HasPrefix(child, name+"/") {
					return pathErr("remove", name, memtool.ErrNotEmpty)
				}
			}
		}
		delete(s.entries, name)
		return nil
	})
}
