package memtool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

func (m *Memory) create(ctx context.Context, c *Create) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name == "" {
		return Result{}, refusef("File %s already exists", c.Path)
	}
	if wantDir {
		return Result{}, refusef("Cannot create %s: a file path must not end with '/'", c.Path)
	}
	if err := m.checkWriteSize(int64(len(c.FileText))); err != nil {
		return Result{}, err
	}
	data := []byte(c.FileText)
	done := func() (Result, error) { return success("File created successfully at: " + c.Path) }

	// A parent removed by a concurrent command between mkdirAll and the
	// write is created again, and with Overwrite a file created or
	// deleted by another between the look and the write is looked at
	// again; a few rounds settle any such race.
	for attempt := 0; ; attempt++ {
		if m.opts.Overwrite {
			fi, err := m.store.Stat(ctx, name)
			if err == nil {
				if !fi.IsRegular() {
					return Result{}, refusef("File %s already exists", c.Path)
				}
				err := m.store.Update(ctx, name, m.opts.MaxReadSize, func([]byte) ([]byte, error) { return data, nil })
				if err == nil {
					return done()
				}
				if !errors.Is(err, ErrNotExist) {
					return Result{}, m.fileError(c.Path, err, missingPath)
				}
				// Deleted meanwhile: create it below.
			} else if !errors.Is(err, ErrNotExist) {
				return Result{}, err
			}
		}
		created, err := m.mkdirAll(ctx, c.Path, path.Dir(name))
		if errors.Is(err, ErrNotExist) && attempt < 3 {
			continue // a parent renamed away meanwhile (object stores say so late)
		}
		if err != nil {
			return Result{}, err
		}
		err = m.store.WriteFile(ctx, name, data, CreateOnly)
		if err == nil {
			return done()
		}
		removeCreated(ctx, m.store, created)
		switch {
		case errors.Is(err, ErrExist) && m.opts.Overwrite && attempt < 3:
			continue // created meanwhile: replace it
		case errors.Is(err, ErrExist):
			return Result{}, refusef("File %s already exists", c.Path)
		case errors.Is(err, ErrNotExist) && attempt < 3:
			continue
		case errors.Is(err, ErrNotDir):
			return Result{}, refusef("The path %s cannot be created: one of its parents is a file, not a directory", c.Path)
		}
		return Result{}, err
	}
}

func (m *Memory) checkWriteSize(n int64) error {
	if n > m.opts.MaxFileSize {
		return refusef("File content is too large: %d bytes, more than the limit of %d bytes. Nothing was written.", n, m.opts.MaxFileSize)
	}
	return nil
}

// mkdirAll creates dir and its missing parents with MkdirAll, and refuses
// a path with a file in the way.
func (m *Memory) mkdirAll(ctx context.Context, p, dir string) ([]string, error) {
	created, err := MkdirAll(ctx, m.store, dir)
	var pe *fs.PathError
	if errors.Is(err, ErrNotDir) && errors.As(err, &pe) {
		return nil, refusef("The path %s cannot be created: %s is a file, not a directory", p, VirtualPath(pe.Path))
	}
	return created, err
}

// edit changes the existing file at p with change, for str_replace and
// insert, whose result is delta bytes longer than the file (shorter if
// delta is negative). before holds the command's own refusals that come
// after the file's (nil: none).
//
// The checks, and so which refusal an edit gets, come in this order: a
// missing file; a path that is not a regular file (a trailing slash asks
// for a directory, so whatever is there is not a file to edit, D19, but a
// missing path is missing, however spelled); a file too large to read;
// before; a result over MaxFileSize (from the size alone); a file that is
// not UTF-8; then change's own; last, a result that is not UTF-8.
//
// An edit is one store call: an Update whose limit is the largest file
// the edit can succeed on, so that the store refuses a larger one from
// its size, unread (ErrTooLarge), and the others are checked on what it
// read, under its write lock. Only a file too large for the edit costs a
// Stat more, to word the refusal from its size.
func (m *Memory) edit(ctx context.Context, p string, delta int64, before func() error, change func(old []byte) ([]byte, error)) error {
	name, wantDir, err := CleanPath(p)
	if err != nil {
		return err
	}
	if name == "" {
		return refusef("The path %s is not a file.", p)
	}
	checked := func(old []byte) ([]byte, error) {
		if wantDir {
			return nil, refusef("The path %s is not a file.", p)
		}
		if before != nil {
			if err := before(); err != nil {
				return nil, err
			}
		}
		if err := m.checkWriteSize(int64(len(old)) + delta); err != nil {
			return nil, err
		}
		if err := editable(p, old); err != nil {
			return nil, err
		}
		updated, err := change(old)
		if err == nil && !utf8.Valid(updated) {
			// A text given through Execute (the command-line tool's
			// arguments) may hold bytes that are not UTF-8, or one byte
			// of a character of the file: the result would be a file no
			// edit may touch again (D3).
			return nil, refusef("The edit would leave %s not valid UTF-8 text: its old_str, new_str or insert_text is not UTF-8, or splits a character. Nothing was changed.", p)
		}
		return updated, err
	}
	if limit := m.editLimit(delta); limit >= 0 {
		err := m.store.Update(ctx, name, limit, checked)
		if !errors.Is(err, ErrTooLarge) {
			return m.fileError(p, err, missingPath)
		}
	}
	fi, err := m.stat(ctx, name, missingPath, p)
	switch {
	case err != nil:
		return err
	case wantDir || !fi.IsRegular():
		return refusef("The path %s is not a file.", p)
	case fi.Size > m.opts.MaxReadSize:
		return m.tooLargeToRead(p, fi.Size)
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := m.checkWriteSize(fi.Size + delta); err != nil {
		return err
	}
	// It fitted a moment ago: it changed meanwhile.
	return m.fileError(p, m.store.Update(ctx, name, m.opts.MaxReadSize, checked), missingPath)
}

// editLimit is the size of the largest file on which an edit that adds
// delta bytes can succeed: at most MaxReadSize, and small enough that the
// result fits MaxFileSize. It is negative when no file is small enough.
func (m *Memory) editLimit(delta int64) int64 {
	if delta < 0 && m.opts.MaxFileSize > m.opts.MaxReadSize+delta {
		return m.opts.MaxReadSize // (and MaxFileSize-delta may not fit an int64)
	}
	return min(m.opts.MaxReadSize, m.opts.MaxFileSize-delta)
}

// editable refuses files that an edit would corrupt (D3).
func editable(p string, old []byte) error {
	if !utf8.Valid(old) {
		return refusef("The file %s is not valid UTF-8 text, so it cannot be edited without corrupting it. Nothing was changed.", p)
	}
	return nil
}

func (m *Memory) strReplace(ctx context.Context, c *StrReplace) (Result, error) {
	emptyOld := func() error {
		if c.OldStr == "" {
			return refusef("No replacement was performed: `old_str` is empty. Give the exact text to replace.")
		}
		return nil
	}
	var snippet string
	err := m.edit(ctx, c.Path, int64(len(c.NewStr))-int64(len(c.OldStr)), emptyOld, func(old []byte) ([]byte, error) {
		text := string(old)
		first := strings.Index(text, c.OldStr)
		if first < 0 {
			return nil, m.notFound(c.OldStr, c.Path)
		}
		if strings.Count(text, c.OldStr) > 1 {
			return nil, m.notUnique(c.OldStr, c.Path, occurrences(text, c.OldStr))
		}
		// Its size, len(old)+delta, edit has checked.
		updated := text[:first] + c.NewStr + text[first+len(c.OldStr):]
		// The snippet runs from two lines before the match to two lines
		// after the last line of new_str (D2).
		startLine := strings.Count(text[:first], "\n") + 1
		lines := strings.Split(updated, "\n")
		from := max(1, startLine-2)
		to := min(len(lines), startLine+2+strings.Count(c.NewStr, "\n"))
		var sb strings.Builder
		sb.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n")
		numberLines(&sb, lines[from-1:to], from)
		snippet = m.capSnippet(sb.String(), c.Path)
		return []byte(updated), nil
	})
	if err != nil {
		return Result{}, err
	}
	return success(snippet)
}

// capSnippet cuts an edit's snippet (which may hold very long lines) to
// MaxViewChars, with a note.
func (m *Memory) capSnippet(s, p string) string {
	if utf8.RuneCountInString(s) <= m.opts.MaxViewChars {
		return s
	}
	// The note names p: a long path takes more than the 200 kept for it.
	note := fmt.Sprintf("\n\n[Snippet cut at %s characters. View %s to read the edited lines.]", formatCount(m.opts.MaxViewChars), p)
	return truncateRunes(s, m.opts.MaxViewChars-max(200, utf8.RuneCountInString(note))) + note
}

// occurrenceLines lists the 1-based lines on which the non-overlapping
// occurrences of sub start, each line once, ascending, joined by ", ".
func occurrenceLines(text, sub string) string {
	return joinLines(occurrences(text, sub))
}

// occurrences returns the 1-based lines on which the non-overlapping
// occurrences of sub start, each line once, ascending.
func occurrences(text, sub string) []int {
	var out []int
	line, pos := 1, 0
	for {
		i := strings.Index(text[pos:], sub)
		if i < 0 {
			return out
		}
		line += strings.Count(text[pos:pos+i], "\n")
		if len(out) == 0 || out[len(out)-1] != line {
			out = append(out, line)
		}
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
}

func joinLines(lines []int) string {
	var sb strings.Builder
	for i, n := range lines {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(n))
	}
	return sb.String()
}

func (m *Memory) insert(ctx context.Context, c *Insert) (Result, error) {
	// An insert adds its text and one newline.
	text := strings.TrimSuffix(c.InsertText, "\n")
	err := m.edit(ctx, c.Path, int64(len(text))+1, nil, func(old []byte) ([]byte, error) {
		lines := strings.Split(string(old), "\n")
		if c.InsertLine < 0 || c.InsertLine > int64(len(lines)) {
			return nil, refusef("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", c.InsertLine, len(lines))
		}
		n := int(c.InsertLine)
		updated := strings.Join(slices.Concat(lines[:n], []string{text}, lines[n:]), "\n")
		return []byte(updated), nil // its size, len(old)+delta, edit has checked
	})
	if err != nil {
		return Result{}, err
	}
	return success("The file " + c.Path + " has been edited.")
}
