package memtool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

func (m *Memory) view(ctx context.Context, c *View) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name != "" && !wantDir {
		r, answered, refused, err := m.viewStream(ctx, c, name)
		if answered {
			return r, err
		}
		// Most views are of a file: one store call reads it. A directory,
		// which the read names as such (ErrIsDir; the stores call one
		// they cannot list irregular, as Stat does), is listed at once.
		// Anything else (a missing or irregular file, a store error, a
		// listing that failed) is looked at again below, as if this read
		// had not happened; a file the store just refused to open is not
		// read again.
		if refused == nil {
			data, err := m.store.ReadFile(ctx, name, m.opts.MaxReadSize)
			if err == nil {
				return m.viewData(c, name, data)
			}
			refused = err
		}
		if errors.Is(refused, ErrIsDir) {
			if r, err := m.listDir(ctx, c.Path, name); err == nil {
				return r, nil
			}
		}
	}
	fi, err := m.stat(ctx, name, missingPath, c.Path)
	switch {
	case err != nil:
		return Result{}, err
	case fi.IsDir():
		return m.listDir(ctx, c.Path, name)
	case !fi.IsRegular():
		return Result{}, refusef("Unsupported file type for %s", c.Path)
	case wantDir:
		return Result{}, refusef("The path %s is not a directory", c.Path)
	}
	if c.ViewRange != nil {
		if err := checkViewRange(*c.ViewRange); err != nil {
			return Result{}, err
		}
	}
	if fi.Size > m.opts.MaxReadSize {
		return Result{}, m.tooLargeToRead(c.Path, fi.Size)
	}
	data, err := m.store.ReadFile(ctx, name, m.opts.MaxReadSize)
	if err != nil {
		return Result{}, m.fileError(c.Path, err, vanishedFile)
	}
	return m.viewData(c, name, data)
}

// viewData answers the view of the file name, whose content is data.
func (m *Memory) viewData(c *View, name string, data []byte) (Result, error) {
	if c.ViewRange != nil {
		if err := checkViewRange(*c.ViewRange); err != nil {
			return Result{}, err
		}
	}
	if mt := imageType(name, data); mt != "" {
		if int64(len(data)) > m.opts.MaxImageSize {
			return Result{}, refusef("Image %s is too large to view: %d bytes, more than the limit of %d bytes", c.Path, len(data), m.opts.MaxImageSize)
		}
		return Result{Image: &Image{MediaType: mt, Data: data}}, nil
	}
	// Lines are counted on the bytes: a newline is never part of an
	// invalid sequence, so the count is that of the decoded text.
	total := bytes.Count(data, newline) + 1
	if total > MaxLines {
		return Result{}, refusef("File %s exceeds maximum line limit of 999,999 lines.", c.Path)
	}
	first, n := 1, total
	if c.ViewRange != nil {
		first, n = viewRange(total, *c.ViewRange)
	}
	rest := data
	for range first - 1 {
		rest = rest[bytes.IndexByte(rest, '\n')+1:]
	}
	return success(m.fileView(c.Path, rest, total, first, n, c.ViewRange))
}

var newline = []byte{'\n'}

// checkViewRange refuses ranges that select nothing by construction: end
// before start, or a negative end other than -1 (see DEVIATIONS.md, D9).
func checkViewRange(vr [2]int64) error {
	start, end := max(vr[0], 1), vr[1]
	if end == -1 || end >= start {
		return nil
	}
	return refusef("Invalid `view_range` parameter: [%d, %d]. It should be [start_line, end_line] with end_line >= start_line, or end_line = -1 to read to the end of the file", vr[0], vr[1])
}

// viewRange returns the 1-based number of the first line shown of a
// file of total lines, and how many are shown. Start is clamped to 1; a
// start past the end shows nothing.
func viewRange(total int, vr [2]int64) (first, n int) {
	all := int64(total)
	start := max(vr[0], 1) - 1
	end := vr[1]
	if end == -1 || end > all {
		end = all
	}
	if start >= end {
		return int(min(start, all)) + 1, 0
	}
	return int(start) + 1, int(end - start)
}

func (m *Memory) tooLargeToRead(p string, size int64) error {
	return refusef("File %s is too large to read: %d bytes, more than the limit of %d bytes", p, size, m.opts.MaxReadSize)
}

// A file that Stat saw a moment ago and a read then did not find.
const vanishedFile = "The file %s no longer exists (it was deleted or renamed at the same time)."

// fileError maps a store error from reading or editing the file p; a
// missing file is refused with missing (missingPath or vanishedFile).
func (m *Memory) fileError(p string, err error, missing string) error {
	switch {
	case errors.Is(err, ErrNotExist):
		return refusef(missing, p)
	case errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
		return refusef("The path %s is not a file.", p)
	case errors.Is(err, ErrTooLarge):
		return refusef("File %s is too large to read (the limit is %d bytes)", p, m.opts.MaxReadSize)
	}
	return err
}

// viewNoteRoom is the room a cut view keeps for the note that says what
// was cut and how to read the rest.
const viewNoteRoom = 300

// cutView is the character-budget cut (D8) of a view over MaxViewChars,
// file views and directory listings alike: after header, it keeps the
// first of n items while they fit, leaving viewNoteRoom characters for the
// note. size(i) is item i's length in characters as the view prints it,
// separator included. It returns how many items it keeps and how many
// characters of the budget they leave.
func (m *Memory) cutView(header string, n int, size func(i int) int) (kept, left int) {
	left = m.opts.MaxViewChars - utf8.RuneCountInString(header) - viewNoteRoom
	for ; kept < n; kept++ {
		s := size(kept)
		if s > left {
			break
		}
		left -= s
	}
	return kept, left
}

// fileView formats the view of n lines of rest, which starts at line
// first of total, cut to MaxViewChars with a note (D8). It looks only at
// the lines it shows, and measures each before it copies it: a view costs
// what it shows, whatever the file's size.
func (m *Memory) fileView(p string, rest []byte, total, first, n int, vr *[2]int64) string {
	header := "Here's the content of " + p + " with line numbers:\n"
	buf := make([]byte, 0, len(header)+min(len(rest)+8*n, 4*m.opts.MaxViewChars))
	buf = append(buf, header...)
	// used is the whole view's length in characters so far; kept and
	// keptLen, once kept is set, say how many lines fit the budget of a
	// cut view (cutView's rule) and where the view ends after them.
	used := utf8.RuneCountInString(header)
	left := m.opts.MaxViewChars - used - viewNoteRoom
	kept, keptLen := -1, 0
	var line0 []byte
	var line0Len int
	for i := range n {
		line := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		}
		chars := runeCountLossy(line)
		if i == 0 {
			line0, line0Len = line, chars
		}
		// A numbered line is its number padded to six, a tab and the
		// line, after a newline unless it is the first.
		size := 7 + chars
		if i > 0 {
			size++
		}
		if kept < 0 {
			if size > left {
				kept, keptLen = i, len(buf)
			} else {
				left -= size
			}
		}
		if used+size > m.opts.MaxViewChars {
			return m.cutFileView(buf[:keptLen], kept, left, line0, line0Len, total, first, n, vr)
		}
		used += size
		if i > 0 {
			buf = append(buf, '\n')
		}
		buf = appendNumbered(buf, first+i, line)
	}
	return string(buf)
}

// cutFileView ends a view cut after kept lines (buf holds them) with the
// note that says what was cut; left is the budget they leave. When not
// even the first line fits, it shows the start of it.
func (m *Memory) cutFileView(buf []byte, kept, left int, line0 []byte, line0Len, total, first, n int, vr *[2]int64) string {
	limit := formatCount(m.opts.MaxViewChars)
	if kept == 0 {
		keep := left - 7
		cut := truncateRunes(string(appendLossy(nil, line0[:min(len(line0), 4*max(keep, 0)+4)])), keep)
		buf = appendNumbered(buf, first, []byte(cut))
		buf = fmt.Appendf(buf, "\n\n[Output cut at %s characters: line %d is %s characters long and only its first %s are shown.",
			limit, first, formatCount(line0Len), formatCount(utf8.RuneCountInString(cut)))
		if n > 1 {
			buf = fmt.Appendf(buf, " Lines %d to %d of %d are not shown; read them with view_range [%d, %s].]", first+1, first+n-1, total, first+1, rangeEnd(vr))
		} else {
			buf = append(buf, ']')
		}
		return string(buf)
	}
	last := first + kept - 1
	buf = fmt.Appendf(buf, "\n\n[Output cut at %s characters: showing lines %d to %d of %d. Read the rest with view_range [%d, %s].]",
		limit, first, last, total, last+1, rangeEnd(vr))
	return string(buf)
}

func rangeEnd(vr *[2]int64) string {
	if vr == nil {
		return "-1"
	}
	return strconv.FormatInt(vr[1], 10)
}

// imageType returns the media type of an image file: the extension names an
// image type and the bytes really are one. Otherwise "".
func imageType(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case ext == ".png" && validHeader(png.DecodeConfig, data):
		return "image/png"
	case (ext == ".jpg" || ext == ".jpeg") && validHeader(jpeg.DecodeConfig, data):
		return "image/jpeg"
	case ext == ".gif" && validHeader(gif.DecodeConfig, data):
		return "image/gif"
	case ext == ".webp" && len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// validHeader reports whether data starts with a well-formed image header
// of a sensible size, as the decoder reads it.
func validHeader(decode func(io.Reader) (image.Config, error), data []byte) bool {
	cfg, err := decode(bytes.NewReader(data))
	return err == nil && cfg.Width > 0 && cfg.Height > 0
}
