package encrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/memtool/memtool"
)

// stale reports whether stored bytes are anything but the current format
// under the writing key.
func (s *Store) stale(data []byte) bool {
	return len(data) < headerLen || !bytes.HasPrefix(data, []byte(magic)) ||
		string(bytes.TrimRight(data[len(magic):len(magic)+MaxKeyIDLen], "\x00")) != s.write.ID
}

// reseal seals the file name again, with the writing key in the current
// format and its text unchanged, if its stored bytes are stale, in one
// atomic Update; any other file stays as it is, and so does one written
// again meanwhile so as to be no longer stale. With check, a file that is
// not stale must open (with the writing key, which its header names), or
// its *Error is returned. It reports whether it rewrote the file. A file
// gone meanwhile is done.
func (s *Store) reseal(ctx context.Context, name string, stale func([]byte) bool, check bool) (bool, error) {
	kept := func(data []byte) error {
		if !check {
			return nil
		}
		_, err := s.open(name, data)
		return err
	}
	data, err := s.inner.ReadFile(ctx, name, noLimit)
	if err != nil {
		return false, ignoreGone(err)
	}
	if !stale(data) {
		return false, kept(data)
	}
	err = s.inner.Update(ctx, name, noLimit, func(old []byte) ([]byte, error) {
		if !stale(old) {
			if err := kept(old); err != nil {
				return nil, err
			}
			return nil, errUnchanged
		}
		plain, err := s.open(name, old)
		if err != nil {
			return nil, err
		}
		return s.seal(plain)
	})
	if err == errUnchanged {
		return false, nil
	}
	return err == nil, ignoreGone(err)
}

// noLimit reads a stored file whatever its size.
const noLimit = 1 << 62

// ignoreGone treats a file removed while a tree is walked as done.
func ignoreGone(err error) error {
	if errors.Is(err, memtool.ErrNotExist) {
		return nil
	}
	return err
}

// ErrRekeyIncomplete: Rekey gave up because each of its passes still
// found files under another key or in the old format.
var ErrRekeyIncomplete = errors.New("encrypt: rekey incomplete")

// rekeyPasses bounds the passes of Rekey over the store.
const rekeyPasses = 5

// Rekey re-encrypts every file of s, a store that New returned, that is
// not yet sealed with its writing key (keys[0] of New) in the current
// format, one file at a time, each with one atomic Update that keeps its
// text, and returns how many times it rewrote a file. Files already under
// the writing key are read and opened, not written: one whose header
// names the writing key's ID but that does not open with it (damaged, or
// sealed with another key of the same ID) stops Rekey with its *Error
// (ErrAuth), since a success would let the old keys go while a file does
// not open with the new one.
//
// It walks the tree below the root as s.ReadDir lists it, and then each
// entry of the root named in also that exists: the entries that policies
// over the encryption keep for themselves (package history's versions,
// package expiry's index and trash), which a store's ReadDir may leave
// out. Below the root, a file not in the encrypted format stops Rekey with
// its *Error (ErrNotEncrypted); in also's entries such a file (kept there
// before encryption was turned on) is left as it is.
//
// The store may be in use meanwhile. A file moved while Rekey walks, from
// a place it has not reached to one it has passed (a rename by the model,
// a restore out of a policy's trash), escapes that walk, and a process
// that still seals with an old key (one not restarted since the rotation)
// leaves new files under it. So Rekey walks the whole store again and
// again until a walk other than the first finds no file to rewrite. When
// it returns nil, the last walk found every file it reached under the
// first key; a file can still be under an old key only if a process not
// yet given the new key wrote it during the last two walks, or renames
// moved it past each of the last two walks. So a nil return suffices once
// every process seals with the new key, as the rotation steps require
// before Rekey runs. After five walks that each found some, it
// fails with ErrRekeyIncomplete: something keeps writing under an old key
// or moving files, the old keys are still needed, and Rekey must be run
// again.
func Rekey(ctx context.Context, s memtool.Store, also ...string) (int, error) {
	es, ok := s.(*Store)
	if !ok {
		return 0, fmt.Errorf("encrypt: Rekey needs a store that New returned, not a %T", s)
	}
	n := 0
	for pass := 1; ; pass++ {
		found, err := es.rekeyPass(ctx, also)
		n += found
		switch {
		case err != nil:
			return n, err
		case found == 0 && pass > 1:
			return n, nil
		case pass == rekeyPasses:
			return n, fmt.Errorf("%w: each of %d passes over the store found files not yet under key %s (%d in the last one): something writes under an old key or moves files meanwhile",
				ErrRekeyIncomplete, pass, es.write.ID, found)
		}
	}
}

// rekeyPass walks s once, as Rekey describes, and seals again every file
// that is stale, returning how many it rewrote.
func (s *Store) rekeyPass(ctx context.Context, also []string) (int, error) {
	n := 0
	rekey := func(keepPlain bool) func(string, memtool.FileInfo) error {
		return func(name string, fi memtool.FileInfo) error {
			if !fi.IsRegular() {
				return nil
			}
			rewrote, err := s.reseal(ctx, name, s.stale, true)
			switch {
			case err == nil:
				if rewrote {
					n++
				}
			case keepPlain && errors.Is(err, ErrNotEncrypted):
			default:
				return err
			}
			return nil
		}
	}
	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if slices.Contains(also, e.Name) {
			continue // walked below
		}
		if err := ignoreGone(memtool.Walk(ctx, s, e.Name, rekey(false))); err != nil {
			return n, err
		}
	}
	for _, name := range also {
		if err := ignoreGone(memtool.Walk(ctx, s, name, rekey(true))); err != nil {
			return n, err
		}
	}
	return n, nil
}
