// Package memstore is a memtool.Store held in memory: fast, shared by
// everything in one process, gone when the process ends. It is the store of
// tests and of `memtool exec --store mem:`.
package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/memtool/memtool"
)

// Store is an in-memory memtool.Store. It implements memtool.Renamer and
// memtool.RemoveAller. The zero value is not usable; call New.
type Store struct {
	mu   sync.RWMutex
	root *node
}

type node struct {
	dir      bool
	data     []byte
	children map[string]*node
}

// New returns an empty store.
func New() *Store {
	return &Store{root: &node{dir: true, children: map[string]*node{}}}
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
)

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// lookup returns the node at name, or an error for op.
func (s *Store) lookup(op, name string) (*node, error) {
	n := s.root
	if name == "" {
		return n, nil
	}
	for _, part := range strings.Split(name, "/") {
		if !n.dir {
			return nil, pathErr(op, name, memtool.ErrNotExist)
		}
		c, ok := n.children[part]
		if !ok {
			return nil, pathErr(op, name, memtool.ErrNotExist)
		}
		n = c
	}
	return n, nil
}

// parent returns the directory that holds name and name's base.
func (s *Store) parent(op, name string) (*node, string, error) {
	dir, base := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		dir, base = name[:i], name[i+1:]
	}
	p, err := s.lookup(op, dir)
	if err != nil {
		return nil, "", err
	}
	if !p.dir {
		return nil, "", pathErr(op, name, memtool.ErrNotDir)
	}
	return p, base, nil
}

// free returns name's parent directory and base name, as parent does, for
// an entry to be made at name: ErrExist if one is there.
func (s *Store) free(op, name string) (*node, string, error) {
	p, base, err := s.parent(op, name)
	if err != nil {
		return nil, "", err
	}
	if _, ok := p.children[base]; ok {
		return nil, "", pathErr(op, name, memtool.ErrExist)
	}
	return p, base, nil
}

func info(name string, n *node) memtool.FileInfo {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if n.dir {
		return memtool.FileInfo{Name: name, Type: fs.ModeDir}
	}
	return memtool.FileInfo{Name: name, Size: int64(len(n.data))}
}

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return memtool.FileInfo{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.lookup("stat", name)
	if err != nil {
		return memtool.FileInfo{}, err
	}
	return info(name, n), nil
}

func (s *Store) readLocked(op, name string, limit int64) ([]byte, error) {
	n, err := s.lookup(op, name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	if int64(len(n.data)) > limit {
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	}
	return n.data, nil
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	data, err := s.readLocked("read", name, limit)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), data...), nil
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, pathErr("readdir", name, memtool.ErrNotDir)
	}
	out := make([]memtool.FileInfo, 0, len(n.children))
	for base, c := range n.children {
		out = append(out, info(base, c))
	}
	return out, nil
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "" { // the root, a directory
		return pathErr("write", name, memtool.ErrIsDir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, base, err := s.parent("write", name)
	if err != nil {
		return err
	}
	if c, ok := p.children[base]; ok {
		if mode == memtool.CreateOnly {
			return pathErr("write", name, memtool.ErrExist)
		}
		if c.dir {
			return pathErr("write", name, memtool.ErrIsDir)
		}
	}
	p.children[base] = &node{data: append([]byte(nil), data...)}
	return nil
}

// Update writes nothing if fn returns the old content.
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.readLocked("update", name, limit)
	if err != nil {
		return err
	}
	updated, err := fn(append([]byte(nil), old...))
	if err != nil {
		return err
	}
	if bytes.Equal(updated, old) {
		return nil // unchanged: nothing to write
	}
	n, _ := s.lookup("update", name)
	n.data = append([]byte(nil), updated...)
	return nil
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	p, base, err := s.free("mkdir", name)
	if err != nil {
		return err
	}
	p.children[base] = &node{dir: true, children: map[string]*node{}}
	return nil
}

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.remove(ctx, "remove", name, false)
}

func (s *Store) RemoveAll(ctx context.Context, name string) error {
	return s.remove(ctx, "removeall", name, true)
}

func (s *Store) remove(ctx context.Context, op, name string, all bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "" {
		return pathErr(op, name, fs.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, base, err := s.parent(op, name)
	if err != nil {
		return err
	}
	c, ok := p.children[base]
	if !ok {
		return pathErr(op, name, memtool.ErrNotExist)
	}
	if c.dir && len(c.children) > 0 && !all {
		return pathErr(op, name, memtool.ErrNotEmpty)
	}
	delete(p.children, base)
	return nil
}

func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if oldname == "" || newname == "" || strings.HasPrefix(newname, oldname+"/") {
		return pathErr("rename", oldname, fmt.Errorf("cannot move %q to %q: %w", oldname, newname, fs.ErrInvalid))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	op, obase, err := s.parent("rename", oldname)
	if err != nil {
		return err
	}
	c, ok := op.children[obase]
	if !ok {
		return pathErr("rename", oldname, memtool.ErrNotExist)
	}
	np, nbase, err := s.free("rename", newname)
	if err != nil {
		return err
	}
	delete(op.children, obase)
	np.children[nbase] = c
	return nil
}
