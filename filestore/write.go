// This file holds the writes and their durability: the new content written
// and fsynced before the write lock is taken (staged), the rename under
// it, the fsync of the directory after it (shared, see dirsync.go).

package filestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// openParent opens the directory that holds name, through the root.
func (s *Store) openParent(op, name string) (*os.File, string, error) {
	dir, base := split(name)
	d, err := s.openForListing(dir)
	if err != nil {
		return nil, "", s.dirErr(op, name, dir, err)
	}
	fi, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, "", mapErr(op, name, err)
	}
	if !fi.IsDir() {
		d.Close()
		return nil, "", classErr(op, name, memtool.ErrNotDir)
	}
	return d, base, nil
}

func randomName(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// writeTemp writes data to a new temp file in d, fsyncs and closes it, and
// returns its name.
func writeTemp(d *os.File, data []byte) (string, error) {
	tmp := randomName(tempPrefix)
	var fd int
	err := withFd(d, func(dfd int) (err error) {
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		return err
	})
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		withFd(d, func(dfd int) error { return unix.Unlinkat(dfd, tmp, 0) })
		return "", err
	}
	return tmp, nil
}

// stage writes data to a new file without a name (see openStaged) in the
// store's directory and fsyncs it, before the write lock is taken. It
// returns nil where it cannot: on a system or file system without
// O_TMPFILE (remembered), and when the write fails (a full disk, a
// read-only store), in which case the write makes its temp file under the
// lock and reports the failure there, in the order the checks come.
func (s *Store) stage(data []byte) *os.File {
	if s.noStage.Load() {
		return nil
	}
	f, err := openStaged(s.self)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) || err == unix.EOPNOTSUPP || err == unix.EISDIR || err == unix.EINVAL {
			s.noStage.Store(true)
		}
		return nil
	}
	if s.hooks != nil && s.hooks.staged != nil {
		s.hooks.staged()
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil
	}
	return f
}

// inParent runs fn for the change op of name, holding the write lock
// (see acquire), with the directory that holds name open
// as d; then, with the lock released, it waits for the fsync of the ticket
// fn returns.
func (s *Store) inParent(ctx context.Context, op, name string, fn func(d *os.File, base string) (ticket, error)) error {
	unlock, err := s.acquire(ctx, op, name, true)
	if err != nil {
		return err
	}
	d, base, err := s.openParent(op, name)
	if err != nil {
		return s.settle(op, name, unlock, ticket{}, err)
	}
	defer d.Close()
	t, err := fn(d, base)
	return s.settle(op, name, unlock, t, err)
}

// settle releases the write lock, then waits for t's fsync. It returns
// err, or else the fsync's error. A failure with no ticket of its own may
// rest on any change of this store whose fsync is under way (a file where
// a directory should be, in a directory it keeps from being removed, too
// large to update): it waits for all of them. A change of the caller's
// own whose fsync failed is unsure: made and seen, but a crash may undo
// it, so its error wraps memtool.ErrOutcomeUnknown, the one error after
// which a store may have changed something.
func (s *Store) settle(op, name string, unlock func(), t ticket, err error) error {
	p := t.pin
	if err != nil && t.b == nil {
		t = s.syncs.pending(s.hooks)
	}
	unlock()
	p.release()
	if serr := s.syncs.wait(t); err == nil && serr != nil {
		err = mapErr(op, name, serr)
		if t.own {
			err = unsure(err)
		}
	}
	return err
}

// unsure is the error err of a directory fsync after a change that is
// made: the change is seen, but a crash may undo it.
func unsure(err error) error {
	return fmt.Errorf("%w: it is made, but the fsync of its directory failed, so a crash may undo it: %w", memtool.ErrOutcomeUnknown, err)
}

// syncMade fsyncs the directory d after a change of op on name made in
// it; a failure is unsure.
func (s *Store) syncMade(d *os.File, op, name string) error {
	if err := syncDir(d, s.hooks); err != nil {
		return unsure(mapErr(op, name, err))
	}
	return nil
}

// change makes the change fn in the directory d (given its descriptor),
// then fsyncs d, so that the change is on disk when it returns. A change
// that fails with EEXIST found something at the name, maybe a write whose
// fsync is under way: the ticket waits for that.
func (s *Store) change(d *os.File, op, name string, fn func(dfd int) error) (ticket, error) {
	if err := withFd(d, fn); err != nil {
		if err == unix.EEXIST {
			return s.syncs.observed(d, s.hooks), mapErr(op, name, err)
		}
		return ticket{}, mapErr(op, name, err)
	}
	return ticket{}, s.syncMade(d, op, name)
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name == "" {
		return classErr("write", name, memtool.ErrIsDir)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st := s.stage(data)
	if st != nil {
		defer st.Close()
	}
	if mode == memtool.CreateOnly {
		return s.inParent(ctx, "write", name, func(d *os.File, base string) (ticket, error) {
			return s.put(d, "write", name, base, data, st, true)
		})
	}
	unlock, err := s.acquire(ctx, "write", name, true)
	if err != nil {
		return err
	}
	// A replace of a link writes the file it leads to (see target).
	to, err := s.target(ctx, "write", name)
	if err != nil {
		return s.settle("write", name, unlock, ticket{}, err)
	}
	d, base, err := s.openParent("write", to)
	if err != nil {
		return s.settle("write", name, unlock, ticket{}, err)
	}
	defer d.Close()
	t, err := s.replace(d, name, to, base, data, st)
	return s.settle("write", name, unlock, t, err)
}

// replace is put of a WriteFile with Replace of name, which writes to
// (base in d), once it checked what is there as Stat would report it:
// links followed through the root, several hard links irregular.
func (s *Store) replace(d *os.File, name, to, base string, data []byte, st *os.File) (ticket, error) {
	fi, err := s.root.Stat(rootName(to))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return ticket{}, mapErr("write", name, err)
	case fi.IsDir():
		return ticket{}, classErr("write", name, memtool.ErrIsDir)
	case info(base, fi).Type != 0:
		return ticket{}, classErr("write", name, memtool.ErrIrregular)
	}
	return s.put(d, "write", name, base, data, st, false)
}

// put gives data the name base in d, holding the write lock: it links the
// staged file st there, or (st nil, or a link that fails) writes a temp
// file now, and without replacing anything when noReplace is set. It
// returns the ticket for the fsync of d that makes the change durable; if
// the name was taken, the one for what the write found there.
//
// A replace pins the file it replaces (see pinAt): every ticket it
// returns carries the pin, which settle releases after the lock.
func (s *Store) put(d *os.File, op, name, base string, data []byte, st *os.File, noReplace bool) (t ticket, err error) {
	if !noReplace {
		p := s.pinAt(d, base)
		defer func() { t.pin = p }()
	}
	err = place(d, base, data, st, noReplace)
	if err == unix.EEXIST {
		return s.syncs.observed(d, s.hooks), mapErr(op, name, err)
	}
	if err != nil {
		return ticket{}, mapErr(op, name, err)
	}
	t, err = s.syncs.renamed(d, s.hooks)
	if err != nil {
		// Not queued: fsync now.
		return ticket{}, s.syncMade(d, op, name)
	}
	return t, nil
}

func place(d *os.File, base string, data []byte, st *os.File, noReplace bool) error {
	if st != nil {
		tmp := base // a create links straight to the name: linkat never replaces
		if !noReplace {
			tmp = randomName(tempPrefix)
		}
		err := withFd(d, func(dfd int) error { return linkStaged(st, dfd, tmp) })
		switch {
		case err == nil && noReplace:
			return nil
		case err == nil:
			return rename(d, tmp, base, false)
		case err == unix.EEXIST && noReplace:
			return err
		}
		// Not linkable here (another file system mounted below the store's
		// directory, a kernel that refuses): a temp file, as without staging.
	}
	tmp, err := writeTemp(d, data)
	if err != nil {
		return err
	}
	return rename(d, tmp, base, noReplace)
}

// rename renames the temp file tmp in d to base, and removes it if that
// fails.
func rename(d *os.File, tmp, base string, noReplace bool) error {
	return withFd(d, func(dfd int) error {
		var err error
		if noReplace {
			err = renameNoReplace(dfd, tmp, dfd, base)
		} else {
			err = unix.Renameat(dfd, tmp, dfd, base)
		}
		if err != nil {
			unix.Unlinkat(dfd, tmp, 0)
		}
		return err
	})
}

// Update reads the file and calls fn holding the write lock. The new
// content is written and fsynced with the lock released (staged, see
// stage); the lock is then taken again to rename it into place if the file
// still holds what fn was given. If it does not, another writer came in
// between: Update runs again, this time all under one hold of the lock.
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	optimistic := !s.noStage.Load()
	for {
		done, err := s.update(ctx, name, limit, fn, optimistic)
		if done {
			return err
		}
		optimistic = false
	}
}

// update makes one attempt of Update; done is false when it must be made
// again, under one hold of the lock.
func (s *Store) update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error), optimistic bool) (done bool, err error) {
	unlock, err := s.acquire(ctx, "update", name, !optimistic)
	if err != nil {
		return true, err
	}
	// An update of a link writes the file it leads to (see target).
	to, err := s.target(ctx, "update", name)
	if err != nil {
		return true, s.settle("update", name, unlock, ticket{}, err)
	}
	old, direct, err := s.readFileHow("read", to, limit)
	if err != nil {
		return true, s.settle("update", name, unlock, ticket{}, err)
	}
	read := bytes.Clone(old) // what the file held, whatever fn does with old
	d, base, err := s.openParent("update", to)
	if err != nil {
		return true, s.settle("update", name, unlock, ticket{}, err)
	}
	defer d.Close()
	updated, err := callHolding(fn, old, unlock)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil || bytes.Equal(updated, read) {
		// Nothing to write. What was read may be another writer's change
		// whose directory fsync is under way: answer once it is durable.
		// Read through a link, it may be in any directory.
		seen := s.syncs.pending(s.hooks)
		if direct {
			seen = s.syncs.observed(d, s.hooks)
		}
		return true, s.settle("update", name, unlock, seen, err)
	}
	if !optimistic {
		return true, s.putRead(d, name, base, updated, nil, direct, unlock)
	}
	unlock()

	st := s.stage(updated)
	if st == nil {
		return false, nil
	}
	defer st.Close()
	if s.hooks != nil && s.hooks.relock != nil {
		s.hooks.relock()
	}
	unlock, err = s.acquire(ctx, "update", name, true)
	if err != nil {
		return true, err
	}
	if now, err := s.target(ctx, "update", name); err != nil || now != to {
		unlock()
		return false, nil // a link changed meanwhile
	}
	now, nowDirect, err := s.readFileHow("read", to, limit)
	if err != nil || !bytes.Equal(now, read) {
		unlock()
		return false, nil // changed meanwhile
	}
	nd, nbase, err := s.openParent("update", to)
	if err != nil {
		return true, s.settle("update", name, unlock, ticket{}, err)
	}
	defer nd.Close()
	return true, s.putRead(nd, name, nbase, updated, st, direct && nowDirect, unlock)
}

// putRead writes data at name in d, made from what was read there under
// the lock still held, and answers once the write is durable. Read not
// directly but through a link there (see readFileHow), the content may be
// another writer's change in another directory whose fsync is under way:
// the answer waits for every such fsync too, so that no acknowledged write
// rests on a change a crash may undo.
func (s *Store) putRead(d *os.File, name, base string, data []byte, st *os.File, direct bool, unlock func()) error {
	var seen ticket
	if !direct {
		seen = s.syncs.pending(s.hooks)
	}
	t, err := s.put(d, "update", name, base, data, st, false)
	if err = s.settle("update", name, unlock, t, err); err != nil {
		return err
	}
	if err := s.syncs.wait(seen); err != nil {
		return unsure(mapErr("update", name, err))
	}
	return nil
}

// callHolding calls fn, which runs with the lock held: if fn panics, the
// lock is released as the panic goes on, so that a caller that recovers it
// (an HTTP server recovers each request's) does not leave the store
// locked for every other writer, in this process and in others.
func callHolding(fn func([]byte) ([]byte, error), old []byte, unlock func()) ([]byte, error) {
	returned := false
	defer func() {
		if !returned {
			unlock()
		}
	}()
	updated, err := fn(old)
	returned = true
	return updated, err
}
