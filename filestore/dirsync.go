// This file holds the group commit of directory fsyncs: the writers of this
// process that renamed into one directory share the fsync that makes their
// renames durable, run after the write lock is released.

package filestore

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// dirSyncs queues the directories that hold renames not yet made durable.
type dirSyncs struct {
	mu   sync.Mutex
	dirs map[dirKey]*dirQueue
}

type dirKey struct{ dev, ino uint64 }

// A dirQueue is one directory's fsyncs: at most one under way (running),
// and the batch of renames that came after it started (next), which the
// next fsync covers.
type dirQueue struct {
	running, next *syncBatch
	users         int // tickets held on this queue
}

// A syncBatch is one fsync of a directory and the renames it covers: every
// rename joined to it was done before the fsync started.
type syncBatch struct {
	done chan struct{} // closed when the fsync has returned
	err  error         // its result, set before done is closed
}

// A ticket is a writer's claim on one batch: wait returns once that batch
// is durable. The zero ticket waits for nothing.
type ticket struct {
	key   dirKey
	q     *dirQueue
	b     *syncBatch
	d     *os.File // the directory, for the writer that ends up running the fsync
	hooks *testHooks
	own   bool         // the ticket's holder made a change of its own in the batch
	pin   pin          // the file the change replaced, released once the lock is
	all   []*syncBatch // or else the batches of every directory (see pending)
}

// key returns the identity of the directory d. Renames into the same
// directory through different descriptors share a queue; a queued directory
// cannot be deleted and its number reused meanwhile, since the writers
// waiting on it keep it open.
func key(d *os.File) (dirKey, error) {
	var st unix.Stat_t
	if err := withFd(d, func(fd int) error { return unix.Fstat(fd, &st) }); err != nil {
		return dirKey{}, err
	}
	return dirKey{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// renamed joins a rename just done in d to the next fsync of d. The caller
// made the rename before calling, so the fsync that the ticket waits for
// starts after it.
func (g *dirSyncs) renamed(d *os.File, h *testHooks) (ticket, error) {
	k, err := key(d)
	if err != nil {
		return ticket{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queue(k)
	if q.next == nil {
		q.next = &syncBatch{done: make(chan struct{})}
	}
	q.users++
	return ticket{key: k, q: q, b: q.next, d: d, hooks: h, own: true}, nil
}

// observed returns a ticket for what is pending in d now: the renames into
// it that are not yet durable, whose content a writer holding the lock may
// have just read. Nothing pending: the zero ticket.
func (g *dirSyncs) observed(d *os.File, h *testHooks) ticket {
	k, err := key(d)
	if err != nil {
		return ticket{} // d is open, so fstat does not fail
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.dirs[k]
	if q == nil {
		return ticket{}
	}
	b := q.next
	if b == nil {
		b = q.running
	}
	if b == nil {
		return ticket{}
	}
	q.users++
	return ticket{key: k, q: q, b: b, d: d, hooks: h}
}

// pending returns a ticket for every rename of this store not yet
// durable, in whatever directory. Its wait runs no fsync: each batch has
// writers of its own, which run it.
func (g *dirSyncs) pending(h *testHooks) ticket {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := ticket{hooks: h}
	for _, q := range g.dirs {
		if b := q.next; b != nil {
			t.all = append(t.all, b)
		} else if q.running != nil {
			t.all = append(t.all, q.running)
		}
	}
	return t
}

func (g *dirSyncs) queue(k dirKey) *dirQueue {
	if g.dirs == nil {
		g.dirs = make(map[dirKey]*dirQueue)
	}
	q := g.dirs[k]
	if q == nil {
		q = &dirQueue{}
		g.dirs[k] = q
	}
	return q
}

// wait returns once t's batch is durable, with the error of its fsync. If
// no fsync of the directory is under way, the caller runs the one for its
// batch; otherwise it waits for the one under way, after which one of the
// batch's writers runs the next. A writer never waits for more than the
// fsync under way and its own.
func (g *dirSyncs) wait(t ticket) error {
	if t.b == nil && len(t.all) == 0 {
		return nil
	}
	if t.hooks != nil && t.hooks.waiting != nil {
		t.hooks.waiting()
	}
	if t.b == nil {
		var err error
		for _, b := range t.all {
			<-b.done
			if err == nil {
				err = b.err
			}
		}
		return err
	}
	defer g.release(t)
	for {
		g.mu.Lock()
		select {
		case <-t.b.done:
			g.mu.Unlock()
			return t.b.err
		default:
		}
		if t.q.running == nil {
			// t.b is not done and none runs: it is the next batch. Take
			// it; renames from now on start a new one.
			b := t.q.next
			t.q.running, t.q.next = b, nil
			g.mu.Unlock()
			err := syncDir(t.d, t.hooks)
			g.mu.Lock()
			b.err = err
			close(b.done)
			t.q.running = nil
			g.mu.Unlock()
			continue
		}
		running := t.q.running.done
		g.mu.Unlock()
		<-running
	}
}

func (g *dirSyncs) release(t ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.q.users--; t.q.users == 0 {
		delete(g.dirs, t.key)
	}
}

// syncDir fsyncs the directory d.
func syncDir(d *os.File, h *testHooks) error {
	if h != nil && h.dirSync != nil {
		h.dirSync()
	}
	if h != nil && h.dirSyncErr != nil {
		if err := h.dirSyncErr(); err != nil {
			return err
		}
	}
	return d.Sync()
}
