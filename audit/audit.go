package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/secretscan"
)

// An Entry is one line of the log: one store operation. It never holds
// file contents.
type Entry struct {
	Time    time.Time `json:"time"`
	Tenant  string    `json:"tenant,omitempty"`
	Op      string    `json:"op"`                 // stat, read, list, write, create, update, mkdir, remove, rename, remove_all
	Path    string    `json:"path"`               // the virtual path, any secret in it cut out (see shownPath)
	NewPath string    `json:"new_path,omitempty"` // rename: the destination, the same way
	Outcome string    `json:"outcome"`            // see Outcome
	Bytes   int64     `json:"bytes,omitempty"`    // read, written or the edit's result, as this wrapper saw it (outside a redacting policy: before redaction)
	Entries int       `json:"entries,omitempty"`  // list: how many entries
	// Micros is how long the operation took, in microseconds.
	Micros int64 `json:"duration_us"`
}

// Outcome classifies an operation's error without its text (which might
// quote file contents): "ok", the class of a memtool store error
// ("not_exist", "exist", "not_dir", "is_dir", "irregular", "escapes",
// "too_large", "not_empty"), "unknown" (memtool.ErrOutcomeUnknown: the
// store's answer was lost, so the change may or may not have been made),
// "cancelled", "refused" (a policy refused it with a memtool.Refusal, as
// the limits, secrets and encrypt wrappers do), or "error". The wrapper logs "edit_failed" for an Update whose edit
// itself failed (old_str not found, …), and "refused" for one that a
// policy outside it refused in the edit function it passed down.
func Outcome(err error) string {
	var ref memtool.Refusal
	var pe *memtool.PathError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, memtool.ErrOutcomeUnknown):
		// Before the context's errors: a lost answer may come with one.
		return "unknown"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.As(err, &ref), errors.As(err, &pe):
		return "refused"
	}
	for _, c := range errorOutcomes {
		if errors.Is(err, c.err) {
			return c.outcome
		}
	}
	return "error"
}

// errorOutcomes are the outcomes of memtool's error classes, in the order
// Outcome tries them.
var errorOutcomes = []struct {
	err     error
	outcome string
}{
	{memtool.ErrNotExist, "not_exist"},
	{memtool.ErrExist, "exist"},
	{memtool.ErrNotDir, "not_dir"},
	{memtool.ErrIsDir, "is_dir"},
	{memtool.ErrIrregular, "irregular"},
	{memtool.ErrEscapes, "escapes"},
	{memtool.ErrTooLarge, "too_large"},
	{memtool.ErrNotEmpty, "not_empty"},
}

// Options configure the wrapper. nil means the defaults.
type Options struct {
	// Tenant is written into every entry: the tenant the wrapped store
	// serves, if the application has one.
	Tenant string
	// Stat logs Stat calls too (off by default: Memory stats before nearly
	// every command, and the other entries say what happened).
	Stat bool
	// OnError receives the errors of writing the log. The operation itself
	// has happened by then and is not undone. Default: ignored.
	OnError func(error)
}

// Store wraps a memtool.Store and writes one Entry per operation to a
// writer. Use New.
type Store struct {
	memtool.Forwarder // Rename and RemoveAll are the Store's own, to log them
	inner             memtool.Store
	opts              Options
	log               *logWriter
}

// logWriter is the writer a Store and its tenants' stores share.
type logWriter struct {
	mu sync.Mutex // one whole line per Write
	w  io.Writer
	// torn is set when a Write failed, so it may have written part of its
	// line (a full disk): the next line starts on a line of its own.
	torn bool
}

// OpenLog opens the log file name for appending, creating it with mode
// 0600 if it is not there. If its last line breaks off (a process that
// logged to it crashed while writing, or found the disk full), OpenLog
// ends that line first, so the next entry stands on a line of its own
// and Read skips the cut-off part.
func OpenLog(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			_, err = f.Write([]byte{'\n'})
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// New wraps inner, logging to w. opts may be nil. The result is a
// memtool.Wrapper: it forwards the optional capabilities of inner, and
// Tenant returns the tenant's store logging to w with the tenant's id.
func New(inner memtool.Store, w io.Writer, opts *Options) memtool.Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	return newStore(inner, &logWriter{w: w}, o)
}

// newStore returns a Store over inner writing to log, whose tenants'
// stores write to the same log with their tenant's id.
func newStore(inner memtool.Store, log *logWriter, opts Options) *Store {
	s := &Store{inner: inner, opts: opts, log: log}
	s.Forwarder = memtool.Forward(inner, func(t memtool.Store, id string) memtool.Store {
		o := s.opts
		o.Tenant = id
		return newStore(t, s.log, o)
	})
	return s
}

var _ memtool.Wrapper = (*Store)(nil)

func (s *Store) record(op, name string, start time.Time, err error, e Entry) {
	s.logOutcome(op, name, start, Outcome(err), e)
}

func (s *Store) logOutcome(op, name string, start time.Time, outcome string, e Entry) {
	e.Time = start.UTC()
	e.Tenant = s.opts.Tenant
	e.Op = op
	e.Path = shownPath(name)
	e.Outcome = outcome
	e.Micros = time.Since(start).Microseconds()
	line, merr := json.Marshal(e)
	if merr != nil {
		s.fail(merr)
		return
	}
	line = append(line, '\n')
	s.log.mu.Lock()
	if s.log.torn {
		line = append([]byte{'\n'}, line...)
	}
	_, werr := s.log.w.Write(line)
	s.log.torn = werr != nil
	s.log.mu.Unlock()
	if werr != nil {
		s.fail(werr)
	}
}

// shownPath is the virtual path of name as the log shows it: each secret
// that the secrets policy would find in it replaced by "[REDACTED kind]",
// as that policy's refusal shows it to the model. A path is the model's
// text: a secret the secrets policy refuses to store as a name, or one in
// the path of a read, which nothing scans, must not reach the log either.
// A path whose redaction does not end (see secretscan.Redact) is shown as
// "[REDACTED path]".
func shownPath(name string) string {
	if found := secretscan.Scan([]byte(name)); found != nil {
		out, ok := secretscan.Redact([]byte(name), found)
		if !ok {
			out = []byte("[REDACTED path]")
		}
		name = string(out)
	}
	return memtool.VirtualPath(name)
}

func (s *Store) fail(err error) {
	if s.opts.OnError != nil {
		s.opts.OnError(err)
	}
}

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	start := time.Now()
	fi, err := s.inner.Stat(ctx, name)
	if s.opts.Stat {
		s.record("stat", name, start, err, Entry{})
	}
	return fi, err
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	start := time.Now()
	data, err := s.inner.ReadFile(ctx, name, limit)
	s.record("read", name, start, err, Entry{Bytes: int64(len(data))})
	return data, err
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	start := time.Now()
	entries, err := s.inner.ReadDir(ctx, name)
	s.record("list", name, start, err, Entry{Entries: len(entries)})
	return entries, err
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	start := time.Now()
	err := s.inner.WriteFile(ctx, name, data, mode)
	op := "write"
	if mode == memtool.CreateOnly {
		op = "create"
	}
	s.record(op, name, start, err, Entry{Bytes: int64(len(data))})
	return err
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	start := time.Now()
	var size int64
	var fnErr error
	err := s.inner.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		data, err := fn(old)
		size, fnErr = int64(len(data)), err
		return data, err
	})
	outcome := Outcome(err)
	if err != nil && err == fnErr && !policyRefusal(err) {
		// The edit itself failed; its text may quote the file.
		outcome = "edit_failed"
	}
	s.logOutcome("update", name, start, outcome, Entry{Bytes: size})
	return err
}

// policyRefusal reports whether err, returned by an edit function, is a
// policy's refusal: audit inside a policy that checks an edit's result
// (secrets, limits) gets the policy's check as part of the edit function.
// A policy refuses with an error of its own type that unwraps to a
// memtool.Refusal; Memory's edit fails with a bare one.
func policyRefusal(err error) bool {
	var ref memtool.Refusal
	_, bare := err.(memtool.Refusal)
	return !bare && errors.As(err, &ref)
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	start := time.Now()
	err := s.inner.Mkdir(ctx, name)
	s.record("mkdir", name, start, err, Entry{})
	return err
}

func (s *Store) Remove(ctx context.Context, name string) error {
	start := time.Now()
	err := s.inner.Remove(ctx, name)
	s.record("remove", name, start, err, Entry{})
	return err
}

func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	start := time.Now()
	err := memtool.ForwardRename(ctx, s.inner, oldname, newname)
	if errors.Is(err, errors.ErrUnsupported) {
		return err // not an operation: the caller falls back, and that is logged
	}
	s.record("rename", oldname, start, err, Entry{NewPath: shownPath(newname)})
	return err
}

func (s *Store) RemoveAll(ctx context.Context, name string) error {
	start := time.Now()
	err := memtool.ForwardRemoveAll(ctx, s.inner, name)
	if errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	s.record("remove_all", name, start, err, Entry{})
	return err
}

// A Filter selects entries of a log. Zero fields select everything.
type Filter struct {
	Tenant  string
	Op      string
	Path    string // the path or a directory above it; a trailing slash changes nothing
	Outcome string
	Since   time.Time
	Until   time.Time
}

// Match reports whether e passes the filter. A path filter matches the
// path and everything below it, also as a rename's destination, and the
// renames and removals of a directory above it, which took it along.
func (f Filter) Match(e Entry) bool {
	dir := strings.TrimRight(f.Path, "/") // logged paths end in none
	if dir == "" {
		dir = f.Path
	}
	touches := func(p string) bool {
		return p != "" && (within(p, dir) || (e.Op == "rename" || e.Op == "remove_all") && within(dir, p))
	}
	switch {
	case f.Tenant != "" && e.Tenant != f.Tenant,
		f.Op != "" && e.Op != f.Op,
		f.Outcome != "" && e.Outcome != f.Outcome,
		f.Path != "" && !touches(e.Path) && !touches(e.NewPath),
		!f.Since.IsZero() && e.Time.Before(f.Since),
		!f.Until.IsZero() && !e.Time.Before(f.Until):
		return false
	}
	return true
}

// within reports whether the path p is dir or below it (dir may end in a
// slash).
func within(p, dir string) bool {
	return p == dir || len(p) > len(dir) && p[:len(dir)] == dir && (p[len(dir)] == '/' || dir[len(dir)-1] == '/')
}

// Read reads a log from r and calls fn for every entry that passes f, in
// order, stopping at fn's first error. Zero bytes (a power loss's,
// however many: see the package doc) and blank lines are skipped, and so
// is the part of an entry that a write that failed (on a full disk) put in
// the log: the writer that failed logs its next line on a line of its
// own, and a line that another writer of the log (a tenant of memtool
// serve, another process) logged right after that part is read from
// where its entry begins (see entries). Any other line that is not an
// entry is an error naming its number.
func Read(r io.Reader, f Filter, fn func(Entry) error) error {
	sc := bufio.NewScanner(withoutZeros{r})
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		for _, part := range entries(text) {
			var e Entry
			d := json.NewDecoder(bytes.NewReader(part))
			d.DisallowUnknownFields()
			err := d.Decode(&e)
			if errors.Is(err, io.ErrUnexpectedEOF) && part[0] == '{' {
				continue // cut off
			}
			if err != nil || e.Op == "" || d.More() {
				if err == nil {
					err = errors.New("not an audit entry")
				}
				return &ReadError{Line: line, Err: err}
			}
			if f.Match(e) {
				if err := fn(e); err != nil {
					return err
				}
			}
		}
	}
	return sc.Err()
}

// withoutZeros reads r without its zero bytes: a power loss's, where the
// log's size reached the disk before its data (package doc), as many as
// the bytes that did not, which may be more than a line holds. An entry
// holds none: JSON escapes them.
type withoutZeros struct{ r io.Reader }

func (z withoutZeros) Read(p []byte) (int, error) {
	for {
		n, err := z.r.Read(p)
		kept := p[:0]
		for _, b := range p[:n] {
			if b != 0 {
				kept = append(kept, b)
			}
		}
		if len(kept) > 0 || err != nil {
			return len(kept), err
		}
	}
}

// entryStart is how every entry begins: Time is Entry's first field.
const entryStart = `{"time":`

// entries cuts a line of a log, not empty, before each entry it holds:
// one, unless a write that failed part way left part of an entry that
// another writer's line continued. An entry begins with entryStart,
// which nothing inside an entry holds: it has no nested object, its
// strings escape their quotes, and the quote after a string that ends
// with "{" (a path /memories/x{) is followed by a comma or a brace.
func entries(text []byte) [][]byte {
	var out [][]byte
	for {
		i := bytes.Index(text[1:], []byte(entryStart))
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
}

// A ReadError is a line of a log that could not be read.
type ReadError struct {
	Line int
	Err  error
}

func (e *ReadError) Error() string {
	return "audit log line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *ReadError) Unwrap() error { return e.Err }
