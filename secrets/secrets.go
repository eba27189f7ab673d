package secrets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/secretscan"
	"github.com/memtool/memtool/internal/tenantlock"
)

// Policy says what the wrapper does with a write that holds a secret.
type Policy int

const (
	// Reject refuses the write; nothing changes.
	Reject Policy = iota
	// Redact writes the file with each secret replaced by
	// "[REDACTED <kind>]".
	Redact
)

// Options configure the wrapper. The zero value (or nil) rejects.
type Options struct {
	Policy Policy
	// MaxFileSize is the size that Redact takes no file over that was
	// within it as sent (a placeholder can be longer than its secret):
	// the largest file the memory's commands may write, default
	// memtool.DefaultMaxFileSize.
	MaxFileSize int64
}

// An Error is a write refused because the resulting file, or a name, would
// hold a secret. It names the kinds and lines, never the secret.
type Error struct {
	Path     string    // the virtual path written
	Findings []Finding // where the secrets are
	msg      string
}

func (e *Error) Error() string { return e.msg }

// Unwrap makes the error a memtool.Refusal, whose text memtool.Memory
// shows the model verbatim.
func (e *Error) Unwrap() error { return memtool.Refusal(e.msg) }

func refuse(name string, findings []Finding, inName bool) *Error {
	vp := memtool.VirtualPath(name)
	if inName {
		// The path is shown with the secret cut out of it.
		vp = memtool.VirtualPath(redactName(name, findings))
	}
	var where []string
	for _, f := range findings {
		if inName {
			where = append(where, f.Kind)
		} else {
			where = append(where, fmt.Sprintf("%s on line %d", f.Kind, f.Line))
		}
	}
	var msg string
	if inName {
		msg = fmt.Sprintf("Refused: the path %s holds what looks like %s. Do not store credentials in memory; nothing was changed.", vp, strings.Join(where, ", "))
	} else {
		msg = fmt.Sprintf("Refused: %s would contain what looks like %s. Do not store credentials in memory; nothing was changed.", vp, strings.Join(where, ", "))
	}
	return &Error{Path: vp, Findings: findings, msg: msg}
}

// A Finding is one secret in a text: its kind, for people ("an AWS
// access key ID", …), its line and its byte span.
type Finding = secretscan.Finding

// Scan returns the secrets in text, ordered by position. Overlapping
// findings are merged into the first.
func Scan(text []byte) []Finding { return secretscan.Scan(text) }

// redactName returns name with each finding, and any secret that cutting
// them out uncovers, replaced (see secretscan.Redact), or a placeholder if
// that does not end.
func redactName(name string, findings []Finding) string {
	if out, ok := secretscan.Redact([]byte(name), findings); ok {
		return string(out)
	}
	return "[REDACTED path]"
}

// openKey returns the first finding that is a private key without its END
// line, or nil.
func openKey(findings []Finding) *Finding {
	for i := range findings {
		if findings[i].Open {
			return &findings[i]
		}
	}
	return nil
}

// Store wraps a memtool.Store and scans every file it is asked to write,
// whole, for secrets. Use New.
type Store struct {
	memtool.Forwarder   // Rename is the Store's own
	memtool.ReadThrough // reads pass through unchanged (Stat, ReadFile, ReadDir and the cheap ways)
	inner               memtool.Store
	policy              Policy
	maxSize             int64 // Options.MaxFileSize
	// moving is held by a rename from its scan of the names it moves
	// until they are moved, and shared by the operations that make
	// entries, so that none is made in the tree unscanned (see Rename).
	// The stores Tenant returns for one tenant share one.
	moving *sync.RWMutex
}

// New wraps inner. opts may be nil (Reject). The result is a
// memtool.Wrapper: it forwards the optional capabilities of inner, and
// Tenant returns the tenant's store under the same policy.
func New(inner memtool.Store, opts *Options) memtool.Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = memtool.DefaultMaxFileSize
	}
	return newStore(inner, o, new(sync.RWMutex), tenantlock.New[sync.RWMutex]())
}

func newStore(inner memtool.Store, o Options, moving *sync.RWMutex, tenants *tenantlock.Locks[sync.RWMutex]) *Store {
	s := &Store{inner: inner, policy: o.Policy, maxSize: o.MaxFileSize, moving: moving}
	s.Forwarder = memtool.Forward(inner, func(t memtool.Store, id string) memtool.Store {
		return newStore(t, o, tenants.Get(id), tenants)
	})
	s.ReadThrough = memtool.PassReads(inner)
	return s
}

var _ memtool.Wrapper = (*Store)(nil)

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.inner.Remove(ctx, name)
}

// checkName refuses a name that holds a secret, whatever the policy: a
// name cannot be redacted without surprising the caller.
func checkName(name string) error {
	if f := Scan([]byte(name)); f != nil {
		return refuse(name, f, true)
	}
	return nil
}

// admit returns ctx's error, or checkName's of name: what a change of
// name must pass before it runs.
func admit(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return checkName(name)
}

// filter applies the policy to the whole content a file would get. Redact
// refuses too where redacting would cut text that is no secret (a private
// key header without its END line: the text after it cannot be told from
// the key's body), or would not end (see secretscan.Redact), or would take
// a file within the largest size a command may write over it.
func (s *Store) filter(name string, data []byte) ([]byte, error) {
	f := Scan(data)
	if f == nil {
		return data, nil
	}
	if s.policy == Redact {
		if open := openKey(f); open != nil {
			vp := memtool.VirtualPath(name)
			return nil, &Error{Path: vp, Findings: f, msg: fmt.Sprintf("Refused: %s would contain what looks like a private key on line %d without an END line that closes it (none follows its header, or text that is no key's comes first), so it cannot be redacted without cutting the text after it. Do not store credentials in memory; nothing was changed.", vp, open.Line)}
		}
		if out, ok := secretscan.Redact(data, f); ok {
			if n := int64(len(out)); n > s.maxSize && int64(len(data)) <= s.maxSize {
				vp := memtool.VirtualPath(name)
				return nil, &Error{Path: vp, Findings: f, msg: fmt.Sprintf("Refused: %s would contain what looks like %s on line %d; redacted, it would be %d bytes, more than the limit of %d bytes. Do not store credentials in memory; nothing was changed.", vp, f[0].Kind, f[0].Line, n, s.maxSize)}
			}
			return out, nil
		}
	}
	return nil, refuse(name, f, false)
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := admit(ctx, name); err != nil {
		return err
	}
	data, err := s.filter(name, data)
	if err != nil {
		return err
	}
	s.moving.RLock()
	defer s.moving.RUnlock()
	return s.inner.WriteFile(ctx, name, data, mode)
}

// Update refuses a name that holds a secret, as a write does, before
// the inner store sees it: the policies below may keep the name even of
// an edit that finds no file (expiry records the use in its index
// before the edit runs).
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := admit(ctx, name); err != nil {
		return err
	}
	return s.inner.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		data, err := fn(old)
		if err != nil {
			return nil, err
		}
		return s.filter(name, data)
	})
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if err := admit(ctx, name); err != nil {
		return err
	}
	s.moving.RLock()
	defer s.moving.RUnlock()
	return s.inner.Mkdir(ctx, name)
}

func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := admit(ctx, newname); err != nil {
		return err
	}
	// Nothing this wrapper makes (nor moves) lands in the tree between
	// the scan and the move, which would move it unscanned. Another
	// process's entry may.
	s.moving.Lock()
	defer s.moving.Unlock()
	// Every entry below oldname gets a new path too, and a secret may
	// span path components (hooks.slack.com/services/…): scan each
	// path the move would make.
	err := memtool.Walk(ctx, s.inner, oldname, func(name string, _ memtool.FileInfo) error {
		return checkName(newname + strings.TrimPrefix(name, oldname))
	})
	if err != nil && !errors.Is(err, memtool.ErrNotExist) && !errors.Is(err, memtool.ErrNotDir) {
		return err // a refusal, or a failure to list: nothing moves
	}
	return memtool.ForwardRename(ctx, s.inner, oldname, newname)
}

// SearchFiles forwards to the index of the wrapped store
// (memtool.Searcher): this policy reads files as they are, and hides none.
func (s *Store) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	return memtool.ForwardSearchFiles(ctx, s.inner, dir, q, fn)
}
