package objectstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memtool/memtool"
)

// Finishing a rename's moves (see "Rename on S3" in s3rename.go): deleting
// each source on the ETag that was copied, and what is done when another
// process changed or removed it meanwhile.

// finishMove deletes the source of m on the ETag it was copied from, then
// commits the copy (commitMove). If another process edited the source since it was copied, the
// new content is written over the copy, on the copy's ETag, and the delete
// tried again. If the source is gone (dropCopy), keeps changing
// (undoMove), or the service answers that it did not delete it
// (errNotMoved), the copy is deleted again. If the answer to the delete was lost and
// another object is at the source now, which may be an edit of the source
// (not deleted) or a file created after the delete, both stay: the copy,
// committed, is a file of its own, and the error wraps
// memtool.ErrOutcomeUnknown.
func (bk *bucket) finishMove(ctx context.Context, m *move) error {
	for attempt := 0; ; attempt++ {
		err := bk.s3delete(ctx, m.src, m.srcETag, m.srcID)
		switch {
		case err == nil:
			return bk.commitMove(ctx, m)
		case errors.Is(err, errReplaced):
			return errors.Join(err, bk.commitMove(ctx, m))
		case isNoSuchKey(err):
			return errors.Join(errSourceGone, bk.dropCopy(ctx, m))
		case errors.Is(err, memtool.ErrOutcomeUnknown):
			return err
		case !isPrecondition(err):
			// The service answered that it did not delete the source
			// (it refused, say 403 AccessDenied, or kept throttling):
			// the source is there as it was copied, and the copy, which
			// refuses edits while its source is there, is taken back.
			if uerr := bk.undoMove(ctx, m); uerr != nil {
				return errors.Join(err, uerr)
			}
			return errors.Join(errNotMoved, err)
		case attempt == editRetries:
			return errors.Join(errKeepsChange, bk.undoMove(ctx, m))
		}
		data, etag, id, err := bk.s3get(ctx, m.src)
		if isNoSuchKey(err) {
			return errors.Join(errSourceGone, bk.dropCopy(ctx, m))
		}
		if err != nil {
			return err
		}
		dstETag, err := bk.s3put(ctx, m.dst, data, m.dstETag, m.meta())
		if isPrecondition(err) || isNoSuchKey(err) {
			return errCopyChanged
		}
		if err != nil {
			return err
		}
		m.srcETag, m.srcID, m.dstETag, m.data = etag, id, dstETag, data
	}
}

// commitMove writes m's copy again with movingFrom committed, once its
// source is deleted. The move is done whatever this write answers: if
// another process got there first (an edit commits a copy whose source is
// gone; a rename or a delete may take it further), the copy is theirs; if
// the write failed, the first edit commits the copy (commitCopy).
func (bk *bucket) commitMove(ctx context.Context, m *move) error {
	if m.meta() != nil {
		bk.s3put(context.WithoutCancel(ctx), m.dst, m.data, m.dstETag, committedMeta())
	}
	return nil
}

// dropCopy undoes m, whose source another process removed: its copy is
// deleted (undoMove), unless m moved a directory's marker and anything is
// under that copy (files and directories the rename moved into it, its
// own moves being finished deepest first): those would be left without
// their directory, which stays. (That process removed the directory once
// the rename had moved everything out of it, so it was empty.)
func (bk *bucket) dropCopy(ctx context.Context, m *move) error {
	if dir, ok := strings.CutSuffix(m.dst, dirMarker); ok && strings.HasSuffix(dir, "/") {
		filled := false
		err := bk.b.list(context.WithoutCancel(ctx), dir, false, func(obj listed) bool {
			filled = obj.key != m.dst
			return !filled
		})
		if err != nil || filled {
			return nil // kept: an empty directory too many, never a file without one
		}
	}
	return bk.undoMove(ctx, m)
}

// undoMove deletes the copy m wrote, on its ETag. A copy that another
// process has changed since holds that process's edit, and stays.
func (bk *bucket) undoMove(ctx context.Context, m *move) error {
	err := bk.s3delete(context.WithoutCancel(ctx), m.dst, m.dstETag, "")
	switch {
	case err == nil, isNoSuchKey(err):
		return nil
	case isPrecondition(err), errors.Is(err, errReplaced):
		return errCopyChanged
	}
	return err
}

// finishAll finishes moves, files first, then markers, deepest first, and
// returns the sources it had to leave: files that kept changing or whose
// copy was changed too, and the markers of the directories that hold them.
// A source another process removed is not left.
func (s *Store) finishAll(ctx context.Context, moves []*move) []string {
	byKey := map[string]*move{}
	keys := make([]string, len(moves))
	for i, m := range moves {
		byKey[m.src], keys[i] = m, m.src
	}
	sortForDelete(keys)
	var left []string
	for _, k := range keys {
		if dir, ok := strings.CutSuffix(k, dirMarker); ok && slices.ContainsFunc(left, func(l string) bool { return strings.HasPrefix(l, dir) }) {
			left = append(left, k)
			continue
		}
		err := s.bk.finishMove(ctx, byKey[k])
		if err != nil && !errors.Is(err, errSourceGone) {
			left = append(left, k)
		}
	}
	return left
}

// outcomeUnknown is the error of a rename that failed once it had deleted
// a source, or once its copy may stay at the new name: a refusal, whose
// text says what the rename left where, or an error wrapping
// memtool.ErrOutcomeUnknown stays as it is; any other is wrapped in
// memtool.ErrOutcomeUnknown, never left an error that reads as "nothing
// changed" (ErrBusy, or a cancellation once blobErr sees ctx ended).
func outcomeUnknown(err error) error {
	var ref memtool.Refusal
	if err == nil || errors.As(err, &ref) || errors.Is(err, memtool.ErrOutcomeUnknown) {
		return err
	}
	return fmt.Errorf("%w (the rename failed after it began deleting its sources: %w)", memtool.ErrOutcomeUnknown, err)
}
