package memtool

import (
	"bytes"
	"context"
	"io"
	"path"
	"strings"
)

// FileOpener is the optional capability of reading a file as a stream, so
// that a view of a large file holds only what it shows.
//
// OpenFile opens the file name for reading, with ReadFile's checks and
// errors at the open (ErrNotExist, ErrIsDir, ErrIrregular, ErrTooLarge
// when its size is over limit), and gives the file's size when opened.
// Reading gives the file's bytes; a read
// that would go past limit bytes (the file grew) fails with an error
// wrapping ErrTooLarge. The caller closes the reader.
//
// Memory views a file through it when the store has it, and falls back to
// ReadFile on any error. Forwarder does not forward it: a wrapper whose
// ReadFile changes the bytes (encryption, redaction) or records the read
// would be bypassed. A wrapper whose ReadFile returns the bytes unchanged
// opts in with an OpenFile that calls ForwardOpenFile.
type FileOpener interface {
	OpenFile(ctx context.Context, name string, limit int64) (r io.ReadCloser, size int64, err error)
}

// ForwardOpenFile calls s's OpenFile, or returns Unsupported if s has no
// FileOpener.
func ForwardOpenFile(ctx context.Context, s Store, name string, limit int64) (io.ReadCloser, int64, error) {
	if o, ok := s.(FileOpener); ok {
		return o.OpenFile(ctx, name, limit)
	}
	return nil, 0, Unsupported("openfile", name)
}

// viewChunk is how much of a file a streamed view reads at a time; a file
// smaller than that is read whole. (A variable for the tests.)
var viewChunk int64 = 128 << 10

// viewStream answers the view of the file name from a FileOpener, reading
// the file once in chunks: it counts its lines, and keeps only the bytes
// from the first line shown on, as many as the view can show. answered is
// false when it did not answer (the open or a read failed, the name is an
// image's, or the first line shown is longer than it keeps, so that its
// length is unknown); the caller then answers as without the capability.
// refused is the open's error when the store could open files but did not
// open this one (a directory, a missing or irregular file, an error): a
// ReadFile would fail alike, so the caller does not try one.
func (m *Memory) viewStream(ctx context.Context, c *View, name string) (r Result, answered bool, refused, err error) {
	if !Has[FileOpener](m.store) || imageExt(name) {
		return Result{}, false, nil, nil
	}
	f, size, err := m.store.(FileOpener).OpenFile(ctx, name, m.opts.MaxReadSize)
	if err != nil {
		if unsupported(err) {
			return Result{}, false, nil, nil
		}
		return Result{}, false, err, nil
	}
	defer f.Close()
	if size < viewChunk {
		// A small file is read whole into one buffer, as ReadFile would.
		data, err := readSmall(f, size)
		if err != nil {
			return Result{}, false, nil, nil
		}
		r, err := m.viewData(c, name, data)
		return r, true, nil, err
	}
	if c.ViewRange != nil {
		if err := checkViewRange(*c.ViewRange); err != nil {
			return Result{}, true, nil, err
		}
	}
	// The view shows lines from start on (viewRange's first, unless it
	// shows nothing). Every line costs at least a quarter of its bytes
	// in characters, so a view of MaxViewChars characters is cut before
	// the end of the first keep bytes from there: a line cut short by
	// keep is never shown, only measured, and its measure (smaller than
	// its own) already cuts the view. Only the length of the first line,
	// which a cut note may give, needs the whole line.
	start := int64(1)
	if c.ViewRange != nil {
		start = max(c.ViewRange[0], 1)
	}
	keep := 4*m.opts.MaxViewChars + 8
	var (
		buf   = make([]byte, viewChunk)
		shown = make([]byte, 0, min(int64(keep), size))
		lines = int64(1) // the line the next byte belongs to
		cut   bool       // shown was cut short at keep bytes
	)
	for {
		n, err := f.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			if lines >= start {
				if len(shown) < keep {
					take := min(len(chunk), keep-len(shown))
					shown = append(shown, chunk[:take]...)
				} else {
					cut = true
				}
				lines += int64(bytes.Count(chunk, newline))
				break
			}
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			chunk = chunk[i+1:]
			lines++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, false, nil, nil
		}
		if lines > MaxLines {
			break
		}
	}
	total := lines
	if total > MaxLines {
		return Result{}, true, nil, refusef("File %s exceeds maximum line limit of 999,999 lines.", c.Path)
	}
	first, n := 1, int(total)
	if c.ViewRange != nil {
		first, n = viewRange(int(total), *c.ViewRange)
	}
	cut = cut || len(shown) == keep
	if n > 0 && cut && bytes.IndexByte(shown, '\n') < 0 {
		return Result{}, false, nil, nil
	}
	r, err = success(m.fileView(c.Path, shown, int(total), first, n, c.ViewRange))
	return r, true, nil, err
}

// imageExt reports whether name's extension is one an image may have
// (imageType).
func imageExt(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// readSmall reads all of r, a file whose size was size when opened, into
// a buffer of that size (plus one byte, to see the end).
func readSmall(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
