package objectstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/memtool/memtool"
)

// Rename on S3, where other processes may change the same objects at the
// same moment. S3 has no rename and no condition spanning two objects, so
// every object is moved by three conditional requests: read it and its
// ETag, write it at the destination only if nothing is there (If-None-Match:
// *), and delete the source only on the ETag that was read (If-Match). A
// source edited in between fails the delete; its new content is then
// written over the copy (If-Match on the copy's ETag) and the delete tried
// again. Nothing is ever deleted but a source on the ETag this process
// copied, or an object this process wrote, on its own ETag. The package
// documentation says what this guarantees.

// A move is one object being moved: read at src with ETag srcETag, and
// written at dst, where it has ETag dstETag, with the content data. A
// file's copy names its source in the movingFrom metadata until
// finishMove commits it.
type move struct {
	src, srcETag, srcID string // srcID: the source's writeID (see put), if it has one
	dst, dstETag        string
	data                []byte
}

// meta is the metadata of m's copy until it is committed: a file's names
// its source; a directory marker, never edited, has none.
func (m *move) meta() map[string]string {
	if strings.HasSuffix(m.dst, "/"+dirMarker) {
		return nil
	}
	return map[string]string{movingFrom: sourceValue(m.src)}
}

// sourceValue is a copy's movingFrom value for the source key src: src
// path-escaped, or, where that would pass maxSourceValue (a long name not
// in ASCII: each of its bytes escaped takes three), base64Prefix and src
// in base64, which S3's 2 KB of user metadata holds for any key.
func sourceValue(src string) string {
	if v := url.PathEscape(src); len(v) <= maxSourceValue {
		return v
	}
	return base64Prefix + base64.RawURLEncoding.EncodeToString([]byte(src))
}

// sourceKey is the source key of a movingFrom value (see sourceValue).
func sourceKey(v string) (string, error) {
	if b64, ok := strings.CutPrefix(v, base64Prefix); ok {
		b, err := base64.RawURLEncoding.DecodeString(b64)
		return string(b), err
	}
	return url.PathUnescape(v)
}

// maxSourceValue is the longest path-escaped movingFrom value;
// base64Prefix starts a longer one's base64, and never a path-escaped key,
// in which '%' only starts an escape.
const (
	maxSourceValue = 1024
	base64Prefix   = "%%b64:"
)

// editRetries bounds how often a move copies again a source that another
// process keeps editing.
const editRetries = 8

// Why a move did not finish. finishMove returns them, joined with what
// undoMove returned.
var (
	errSourceGone  = errors.New("the source was removed by another process")
	errKeepsChange = errors.New("the source kept changing")
	errCopyChanged = errors.New("another process changed the copy")
	errNotMoved    = errors.New("the source could not be deleted, and the copy was deleted again")
)

// stragglerPasses bounds how often a directory rename lists its source
// again for entries that other processes created while it ran.
const stragglerPasses = 4

// copyObject reads src and writes its content at dst, which must not
// exist: 412 from S3 if it does. A source that is itself the copy of an
// unfinished rename is not copied (errRenaming) unless that rename's
// source is gone (commitCopy).
func (bk *bucket) copyObject(ctx context.Context, src, dst string) (*move, error) {
	for {
		out, err := bk.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bk.s3name), Key: aws.String(src)})
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			return nil, err
		}
		etag := aws.ToString(out.ETag)
		if from := pending(out.Metadata); from != "" {
			if err := bk.commitCopy(ctx, src, from, etag, data); err != nil {
				return nil, err
			}
			continue
		}
		m := &move{src: src, srcETag: etag, srcID: out.Metadata[writeID], dst: dst, data: data}
		if m.dstETag, err = bk.s3put(ctx, dst, data, ifAbsent, m.meta()); err != nil {
			return nil, err
		}
		return m, nil
	}
}

// bothKept is the refusal for a rename that left the file at both names
// because both were changed by other processes while it ran.
func bothKept(oldname, newname string) error {
	return memtool.Refusal(fmt.Sprintf("The rename of %s to %s stopped: other processes changed the file at both names while it ran, so both are kept. View them both before changing either.", memtool.VirtualPath(oldname), memtool.VirtualPath(newname)))
}

func (s *Store) renameFileS3(ctx context.Context, oldname, newname string) error {
	m, err := s.bk.copyObject(ctx, s.fileKey(oldname), s.fileKey(newname))
	switch {
	case errors.Is(err, errRenaming):
		return s.renaming(oldname)
	case isNoSuchKey(err):
		return pathErr("rename", oldname, memtool.ErrNotExist)
	case isPrecondition(err):
		return pathErr("rename", newname, memtool.ErrExist)
	case err != nil:
		return err
	}
	if parent := parentOf(newname); parent != "" {
		// The destination's directory may be renamed or removed by
		// another process at this moment.
		where, err := s.settle(ctx, m.dst, m.dstETag, s.markerKey(parent))
		if err != nil {
			return undoneOr(err, s.bk.undoMove(ctx, m))
		}
		if where == undone {
			return pathErr("rename", newname, memtool.ErrNotExist)
		}
	}
	// From here the rename deletes the source: a cancellation in the
	// middle would leave the file at both names, or its copy refusing
	// edits, so it finishes (a few requests) whatever ctx says. A failure
	// not told apart below leaves the copy at newname, and may come after
	// the source was deleted: it wraps memtool.ErrOutcomeUnknown.
	err = s.bk.finishMove(context.WithoutCancel(ctx), m)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errCopyChanged):
		return bothKept(oldname, newname)
	case errors.Is(err, errSourceGone):
		return pathErr("rename", oldname, memtool.ErrNotExist)
	case errors.Is(err, errKeepsChange):
		return pathErr("rename", oldname, fmt.Errorf("%w: other processes kept editing the file", memtool.ErrBusy))
	case errors.Is(err, errNotMoved):
		return err // the file is at its old name only, as it was
	}
	return outcomeUnknown(err)
}

// renameDirS3 moves the directory oldname and everything in it:
//
//  1. write the destination's marker with If-None-Match (so that of racing
//     renames onto one name exactly one goes on);
//  2. copy every object under the source to the destination, each with
//     If-None-Match: an object there already was put by another process,
//     and the rename is undone (ErrExist);
//  3. check the destination's marker is still there (another process may
//     have moved or removed the directory it is in);
//  4. delete the sources on their copied ETags, files first, then the
//     markers deepest first, the source's own last;
//  5. list the source again, and move what other processes created in it
//     meanwhile, until it is empty.
func (s *Store) renameDirS3(ctx context.Context, oldname, newname string) error {
	from, to := s.dirPrefix(oldname), s.dirPrefix(newname)
	oldMarker, newMarker := s.markerKey(oldname), s.markerKey(newname)
	oldMarkerETag, err := s.bk.s3etag(ctx, oldMarker)
	if isNoSuchKey(err) {
		return pathErr("rename", oldname, memtool.ErrNotExist)
	}
	if err != nil {
		return err
	}
	claim := &move{dst: newMarker}
	claim.dstETag, err = s.bk.s3put(ctx, newMarker, markerBody(), ifAbsent, nil)
	if isPrecondition(err) {
		return pathErr("rename", newname, memtool.ErrExist)
	}
	if err != nil {
		return err
	}
	if parent := parentOf(newname); parent != "" {
		where, err := s.settle(ctx, newMarker, claim.dstETag, s.markerKey(parent))
		if err != nil {
			return undoneOr(err, s.bk.undoMove(ctx, claim))
		}
		if where != kept {
			return pathErr("rename", newname, memtool.ErrNotExist)
		}
	}

	keys, err := s.keysBelow(ctx, oldname, 0)
	if err != nil {
		return s.undoCopiesFor(ctx, err, nil, claim, to)
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == oldMarker })
	moves, err := s.copyAll(ctx, keys, from, to)
	if err == nil {
		err = s.checkMarker(ctx, newMarker, newname)
	}
	if errors.Is(err, memtool.ErrOutcomeUnknown) {
		// A copy may still be made after Rename answers: the new
		// directory and its copies stay (as after a crash), so that it
		// never lands hidden, without its directory.
		return err
	}
	if err != nil {
		return s.undoCopiesFor(ctx, err, moves, claim, to)
	}
	// Everything is copied: from here the rename deletes sources, and a
	// cancellation in the middle would leave the tree torn between the
	// two names, so it finishes whatever ctx says. A failure from here
	// on is a refusal that says what stays where, or wraps
	// memtool.ErrOutcomeUnknown.
	return outcomeUnknown(s.finishDirRename(context.WithoutCancel(ctx), oldname, newname, oldMarkerETag, moves))
}

// finishDirRename is renameDirS3 from step 4 on, once the sources are
// copied (moves), the source's own marker having the ETag oldMarkerETag.
func (s *Store) finishDirRename(ctx context.Context, oldname, newname, oldMarkerETag string, moves []*move) error {
	from, to := s.dirPrefix(oldname), s.dirPrefix(newname)
	oldMarker, newMarker := s.markerKey(oldname), s.markerKey(newname)
	left := s.finishAll(ctx, moves)
	if len(left) == 0 {
		if err := s.bk.s3delete(ctx, oldMarker, oldMarkerETag, ""); err != nil && !isNoSuchKey(err) && !isPrecondition(err) && !errors.Is(err, errReplaced) {
			return err
		}
	}
	for pass := 0; pass < stragglerPasses; pass++ {
		keys, err := s.keysBelow(ctx, oldname, 0)
		if err != nil || len(keys) == 0 {
			return err
		}
		if ok, err := exists(ctx, s.bk.b, oldMarker); err != nil || ok {
			// The rename left sources it could not move, or another
			// process made the directory again: what is there is in a
			// directory, and stays.
			return errors.Join(err, s.leftBehind(oldname, newname, left))
		}
		moves, err := s.copyAll(ctx, keys, from, to)
		if err == nil {
			err = s.checkMarker(ctx, newMarker, newname)
		}
		if err != nil {
			// What other processes created in the source cannot follow
			// (its name is taken in the destination, or the destination
			// went away): it stays, in its directory made again.
			if err := s.undoMoves(ctx, moves); err != nil {
				return err
			}
			break
		}
		left = s.finishAll(ctx, moves)
	}
	keys, err := s.keysBelow(ctx, oldname, 0)
	for _, k := range keys {
		err = errors.Join(err, s.adopt(ctx, k))
	}
	return errors.Join(err, s.leftBehind(oldname, newname, keys))
}

// copyAll copies every object at keys from under the prefix from to under
// to. A source that is gone by now is skipped. It stops at the first
// failure, returning the moves done so far; an object already at a
// destination fails with ErrExist.
func (s *Store) copyAll(ctx context.Context, keys []string, from, to string) ([]*move, error) {
	var moves []*move
	for _, key := range keys {
		m, err := s.bk.copyObject(ctx, key, to+strings.TrimPrefix(key, from))
		switch {
		case errors.Is(err, errRenaming):
			return moves, s.renaming(strings.TrimPrefix(key, s.root))
		case isNoSuchKey(err):
			continue
		case isPrecondition(err):
			return moves, pathErr("rename", strings.TrimPrefix(to+strings.TrimPrefix(key, from), s.root), memtool.ErrExist)
		case err != nil:
			return moves, err
		}
		moves = append(moves, m)
	}
	return moves, nil
}

// checkMarker fails with ErrNotExist unless the directory marker is
// there: the destination's directory was moved or removed by another
// process while the rename copied into it.
func (s *Store) checkMarker(ctx context.Context, marker, name string) error {
	ok, err := exists(ctx, s.bk.b, marker)
	if err == nil && !ok {
		err = pathErr("rename", name, memtool.ErrNotExist)
	}
	return err
}

// leftBehind is the refusal for a directory rename that moved everything
// but the sources at keys, which stay under oldname.
func (s *Store) leftBehind(oldname, newname string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	var names []string
	for _, k := range keys {
		if !strings.HasSuffix(k, "/"+dirMarker) {
			names = append(names, memtool.VirtualPath(strings.TrimPrefix(k, s.root)))
		}
	}
	return memtool.Refusal(fmt.Sprintf("%s was renamed to %s except for files it could not move (other processes kept changing them, or took their names in %s, or the storage failed), which are still under %s: %s. View both directories.", memtool.VirtualPath(oldname), memtool.VirtualPath(newname), memtool.VirtualPath(newname), memtool.VirtualPath(oldname), strings.Join(names, ", ")))
}

// undoMoves deletes the copies of moves whose sources are all still there.
func (s *Store) undoMoves(ctx context.Context, moves []*move) error {
	var errs []error
	for _, m := range moves {
		if err := s.bk.undoMove(ctx, m); err != nil && !errors.Is(err, errCopyChanged) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// undoneOr is the answer of a rename that failed with err before it
// deleted any source, once the undo of its copy answered uerr: err if the
// copy is gone (or another process changed it, and it is theirs), else an
// error wrapping memtool.ErrOutcomeUnknown, never one that says nothing
// changed while the copy may be at the new name.
func undoneOr(err, uerr error) error {
	if uerr == nil || errors.Is(uerr, errCopyChanged) {
		return errors.Join(err, uerr)
	}
	return fmt.Errorf("%w (%v; the copy under the new name could not be deleted: %v)", memtool.ErrOutcomeUnknown, err, uerr)
}

// undoCopiesFor is the answer of a directory rename that failed with err
// before it deleted any source: it takes back the copies (undoCopies) and
// fails with err, or, if they could not all be deleted, with an error
// wrapping memtool.ErrOutcomeUnknown, never one that says nothing changed
// while part of the copy is under the new name.
func (s *Store) undoCopiesFor(ctx context.Context, err error, moves []*move, claim *move, to string) error {
	if uerr := s.undoCopies(ctx, moves, claim, to); uerr != nil {
		return fmt.Errorf("%w (%v; the copies under the new name could not all be deleted: %v)", memtool.ErrOutcomeUnknown, err, uerr)
	}
	return err
}

// undoCopies takes back a directory rename before it deleted any source:
// the copies, then the destination's marker claim. If another process put
// something in the destination meanwhile (or changed a copy), the marker
// is written again, so that it stays a directory.
func (s *Store) undoCopies(ctx context.Context, moves []*move, claim *move, to string) error {
	err := s.undoMoves(ctx, moves)
	if err2 := s.bk.undoMove(ctx, claim); err2 != nil && !errors.Is(err2, errCopyChanged) {
		return errors.Join(err, err2)
	}
	it, lerr := s.keysUnder(context.WithoutCancel(ctx), to, 1)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if len(it) > 0 {
		err = errors.Join(err, s.adopt(ctx, it[0]))
	}
	return err
}
