package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storeurl"
)

// A policyFile configures the store wrappers every command goes through
// (--policy FILE, else $MEMTOOL_POLICY). Absent fields are off.
type policyFile struct {
	// The engine's own caps (memtool.DefaultMaxFileSize, MaxPathBytes,
	// MaxDepth) apply first: a limit above one would never be reached,
	// so it is refused rather than accepted and ignored. The max tags
	// are those caps (TestPolicyLimitsWithinEngineCaps).
	Limits *struct {
		MaxFileSize   int64 `json:"max_file_size" max:"1048576" hint:"memtool refuses a larger file first; 0 for no limit of the policy's own"`
		MaxFiles      int64 `json:"max_files"`
		MaxBytes      int64 `json:"max_bytes"`
		MaxPathLength int   `json:"max_path_length" max:"1024" hint:"memtool refuses a longer path first; 0 for no limit of the policy's own"`
		MaxDepth      int   `json:"max_depth" max:"32" hint:"memtool refuses a deeper path first; 0 for no limit of the policy's own"`
	} `json:"limits"`
	Secrets string `json:"secrets"` // "reject" or "redact"
	Audit   string `json:"audit"`   // a file to append to, or "-" for stderr
	Encrypt bool   `json:"encrypt"` // keys from $MEMTOOL_KEY, else $MEMTOOL_KEY_FILE
	Expiry  bool   `json:"expiry"`  // record accesses, for memtool gc
	History *struct {
		// Not 0, which the history package reads as its default of 20.
		MaxVersions int    `json:"max_versions" min:"1" hint:"leave the field out for the default of 20"`
		MaxAge      string `json:"max_age"` // 30d, 12h; positive
		// All versions together; absent: see historyMaxBytes. Not 0, which
		// would read as "no bound" beside the limits' zeros, or as the
		// default beside max_versions': neither is safe to guess.
		MaxBytes *int64 `json:"max_bytes" min:"1" hint:"leave the field out for the default"`
	} `json:"history"`
}

// historyPerQuota is how many times limits.max_bytes the versions may
// hold when the policy sets no history.max_bytes: as if every file of a
// full memory had been replaced that many times.
const historyPerQuota = 10

// historyMaxBytes is the bound on the bytes of all versions of a memory:
// history.max_bytes, else historyPerQuota times limits.max_bytes, else 0
// for the history package's default. Without one, a model could fill the
// disk through versions, which count against no limit (see package
// history).
func (p *policyFile) historyMaxBytes() int64 {
	switch {
	case p.History != nil && p.History.MaxBytes != nil:
		return *p.History.MaxBytes
	case p.Limits != nil && p.Limits.MaxBytes > 0:
		return min(p.Limits.MaxBytes, math.MaxInt64/historyPerQuota) * historyPerQuota
	}
	return 0
}

// loadPolicy reads a policy file. It is parsed strictly, since a field
// lost to a typo could silently turn encryption off: a duplicate key at
// any level, a key that is unknown or differs from a known one in case,
// null, a value of the wrong type or out of range, and anything after the
// one object are errors that name the problem.
func loadPolicy(name string) (*policyFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var p policyFile
	if err := decodeStrict(data, &p); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return &p, nil
}

// check refuses the values that decodeStrict cannot judge by type.
func (p *policyFile) check() error {
	switch p.Secrets {
	case "", "reject", "redact":
	default:
		return fmt.Errorf("secrets: %q: want \"reject\" or \"redact\"", p.Secrets)
	}
	if h := p.History; h != nil && h.MaxAge != "" {
		// Not 0 or less, which the history package reads as its default
		// of 30 days, or as "keep versions for ever".
		if age, err := parseDays(h.MaxAge); err != nil || age <= 0 {
			return fmt.Errorf("history.max_age: %q: want a duration such as 30d or 12h, more than zero (leave the field out for the default of 30d)", h.MaxAge)
		}
	}
	return nil
}

// A policyStack is a store with the policies applied. Outermost first:
// audit (sees every refusal), secrets (before limits, which then count
// the redacted size), limits, history, expiry, encrypt (innermost, so the
// versions and the access index are encrypted too), the store.
type policyStack struct {
	top          memtool.Store // what Memory runs on
	belowHistory memtool.Store // where memtool history, diff and revert read versions
	history      memtool.Store // the history layer, with the policy's options; nil without one
	belowExpiry  memtool.Store // where memtool gc and restore look
	// gcStore is belowExpiry whose changes go to the audit policy's log,
	// if any: where gc, gc --reset-index and restore work, so that the
	// log records each move to, from and out of the trash.
	gcStore memtool.Store
	expiry  bool // the expiry policy is in force: every use is recorded
	closers []io.Closer
}

func (st *policyStack) Close() error {
	var errs []error
	for _, c := range st.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// auditLogOpens checks that the policy's audit log (if it keeps one in a
// file) opens as applyPolicy opens it, writing nothing to it: a command
// checks it before it opens the store, since every tenant would fail to
// open on it after recording its policy in the store.
func (p *policyFile) auditLogOpens() error {
	if p.Audit == "" || p.Audit == "-" {
		return nil
	}
	f, err := os.OpenFile(p.Audit, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("policy: audit log: %w", err)
	}
	return f.Close()
}

// flagPolicyReady reads the policy of --policy or $MEMTOOL_POLICY (none
// if neither is set) and checks that its audit log opens and, if it
// encrypts, that the keys load: a command checks these before it opens
// the store, so that a bad policy file, an audit log that cannot be
// written or a missing key creates no store and no tenant, and records
// no policy in the store.
func flagPolicyReady(env *cliEnv, sf *storeFlags) (*policyFile, error) {
	p, err := flagPolicy(env, sf)
	if err != nil {
		return nil, err
	}
	if err := p.auditLogOpens(); err != nil {
		return nil, err
	}
	if p.Encrypt {
		if _, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// flagPolicy reads the policy file of --policy or $MEMTOOL_POLICY; with
// neither set, the policy is empty.
func flagPolicy(env *cliEnv, sf *storeFlags) (*policyFile, error) {
	if name := cmp.Or(sf.policy, env.getenv("MEMTOOL_POLICY")); name != "" {
		return loadPolicy(name)
	}
	return &policyFile{}, nil
}

// stackPolicy puts the policy p over raw, as stackPolicies does with the
// policy the flags name.
func stackPolicy(ctx context.Context, env *cliEnv, sf *storeFlags, raw memtool.Store, p *policyFile) (*policyStack, error) {
	var keys []encrypt.Key
	if p.Encrypt {
		var err error
		if keys, err = encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
			return nil, err
		}
	}
	if err := checkPolicy(ctx, raw, p.record(), sf.tenant, !sf.noRecord); err != nil {
		return nil, fmt.Errorf("store %s: %w", storeLabel(storeURL(sf.store, env), sf.tenant), err)
	}
	return applyPolicy(raw, p, keys, sf.tenant, env)
}

// storeLabel names a memory in messages, with any password masked.
func storeLabel(url, tenant string) string {
	if tenant != "" {
		return storeurl.Redact(url) + " (tenant " + tenant + ")"
	}
	return storeurl.Redact(url)
}

func applyPolicy(base memtool.Store, p *policyFile, keys []encrypt.Key, tenant string, env *cliEnv) (*policyStack, error) {
	st := &policyStack{}
	s := base
	if p.record().on() {
		// The store holds a policy record, or will: not the model's.
		s = hideRecord(s)
	}
	if p.Encrypt {
		var err error
		if s, err = encrypt.New(s, keys, &encrypt.Options{Tenant: tenant}); err != nil {
			return nil, err
		}
	}
	st.belowExpiry, st.gcStore, st.expiry = s, s, p.Expiry
	if p.Expiry {
		s = expiry.New(s, nil)
	}
	st.belowHistory = s
	if h := p.History; h != nil {
		opts := &versions.Options{MaxVersions: h.MaxVersions, MaxBytes: p.historyMaxBytes()}
		if h.MaxAge != "" {
			age, err := parseDays(h.MaxAge)
			if err != nil {
				return nil, fmt.Errorf("policy: history max_age %q: %w", h.MaxAge, err)
			}
			opts.MaxAge = age
		}
		s = versions.New(s, opts)
		st.history = s
	}
	if l := p.Limits; l != nil {
		s = limits.New(s, &limits.Options{MaxFileSize: l.MaxFileSize, MaxFiles: l.MaxFiles, MaxBytes: l.MaxBytes, MaxPathLength: l.MaxPathLength, MaxDepth: l.MaxDepth})
	}
	switch p.Secrets {
	case "":
	case "reject":
		s = secrets.New(s, nil)
	case "redact":
		s = secrets.New(s, &secrets.Options{Policy: secrets.Redact})
	default:
		return nil, fmt.Errorf("policy: secrets %q: want reject or redact", p.Secrets)
	}
	if p.Audit != "" {
		var w io.Writer = env.stderr
		if p.Audit != "-" {
			f, err := audit.OpenLog(p.Audit)
			if err != nil {
				return nil, fmt.Errorf("policy: audit log: %w", err)
			}
			st.closers = append(st.closers, f)
			w = f
		}
		opts := &audit.Options{Tenant: tenant, OnError: func(err error) {
			fmt.Fprintf(env.stderr, "memtool: audit log: %v\n", err)
		}}
		s = audit.New(s, w, opts)
		st.gcStore = changesAudited{st.belowExpiry, audit.New(st.belowExpiry, w, opts)}
	}
	st.top = s
	return st, nil
}

// changesAudited is a store whose changes go through audited, the same
// store under the audit policy's log, and whose reads do not: gc reads
// the access index and walks the memory for its own ends, and the log
// records what it changes.
type changesAudited struct {
	memtool.Store
	audited memtool.Store
}

func (s changesAudited) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return s.audited.WriteFile(ctx, name, data, mode)
}

func (s changesAudited) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	return s.audited.Update(ctx, name, limit, fn)
}

func (s changesAudited) Mkdir(ctx context.Context, name string) error {
	return s.audited.Mkdir(ctx, name)
}

func (s changesAudited) Remove(ctx context.Context, name string) error {
	return s.audited.Remove(ctx, name)
}

func (s changesAudited) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, s.audited, oldname, newname)
}

func (s changesAudited) RemoveAll(ctx context.Context, name string) error {
	return memtool.ForwardRemoveAll(ctx, s.audited, name)
}

// recordHidden is a store that leaves its policy record (recordName) out
// of the listings of its root, for the policies over it: a store that
// lists it (SQLite, say) would otherwise have the limits policy count it
// against max_files and max_bytes, and memtool info count it as a file
// of the memory. Everything else passes through.
type recordHidden struct {
	memtool.Store
	memtool.Forwarder
}

func hideRecord(s memtool.Store) memtool.Store {
	return recordHidden{s, memtool.Forward(s, func(t memtool.Store, _ string) memtool.Store { return hideRecord(t) })}
}

func (s recordHidden) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	fis, err := s.Store.ReadDir(ctx, name)
	if name == "" {
		fis = slices.DeleteFunc(fis, func(fi memtool.FileInfo) bool { return fi.Name == recordName })
	}
	return fis, err
}

// SearchFiles keeps the store's index for the policies over it that
// search with it.
func (s recordHidden) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	return memtool.ForwardSearchFiles(ctx, s.Store, dir, q, func(name string, data []byte) error {
		if name == recordName {
			return nil
		}
		return fn(name, data)
	})
}
