// This file holds the pin of a file that a write replaces: the reference
// that keeps the kernel from freeing the old file's blocks inside the
// rename, under the write lock, and its release after the lock.

package filestore

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A pin is a descriptor that holds a replaced file's inode (see pinAt).
// The zero pin holds nothing.
type pin struct {
	fd    int
	set   bool
	now   bool      // release closes it at once, so the space is free when the call returns
	queue *pinQueue // its store's count of pins waiting for the background close
}

// A pinQueue counts one store's pins waiting for the background close, so
// that Close can wait for them: an open pin keeps its file system busy (it
// could not be unmounted).
type pinQueue struct {
	mu   sync.Mutex
	n    int
	idle sync.Cond
}

func (q *pinQueue) add() {
	q.mu.Lock()
	q.n++
	q.mu.Unlock()
}

func (q *pinQueue) done() {
	q.mu.Lock()
	if q.n--; q.n == 0 {
		q.idle.Broadcast()
	}
	q.mu.Unlock()
}

// wait returns once none of the store's pins waits to be closed.
func (q *pinQueue) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.idle.L == nil {
		q.idle.L = &q.mu
	}
	for q.n > 0 {
		q.idle.Wait()
	}
}

// pinAt pins the file base in d (see pin_linux.go), unless a test has
// turned pins off.
func (s *Store) pinAt(d *os.File, base string) pin {
	if s.noPin {
		return pin{}
	}
	p := pinAt(d, base)
	p.queue = &s.pins
	return p
}

// unpinning closes released pins, in order, on one goroutine of its own,
// started at the first release: the close is where the kernel frees the
// old file's blocks, so the writer that released the pin does not wait
// for it. A full queue (more than its capacity of releases waiting) makes
// the releasing writer close its pin itself.
var unpinning struct {
	once sync.Once
	pins chan pin
}

// release lets the pinned file go, once the write lock is released: its
// blocks are freed soon after, in the background, or before release
// returns if the pin says now.
func (p pin) release() {
	switch {
	case !p.set:
		return
	case p.now:
		unix.Close(p.fd)
		return
	}
	unpinning.once.Do(func() {
		unpinning.pins = make(chan pin, 256)
		go func() {
			for p := range unpinning.pins {
				p.close()
			}
		}()
	})
	p.queue.add()
	select {
	case unpinning.pins <- p:
	default:
		p.close()
	}
}

// close closes a pin queued for the background close.
func (p pin) close() {
	unix.Close(p.fd)
	p.queue.done()
}
