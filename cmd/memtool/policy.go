package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/secrets"
)

// A policyFile configures the store wrappers every command goes through
// (--policy FILE, else $MEMTOOL_POLICY). Absent fields are off.
type policyFile struct {
	Limits *struct {
		MaxFileSize   int64 `json:"max_file_size"`
		MaxFiles      int64 `json:"max_files"`
		MaxBytes      int64 `json:"max_bytes"`
		MaxPathLength int   `json:"max_path_length"`
		MaxDepth      int   `json:"max_depth"`
	} `json:"limits"`
	Secrets string `json:"secrets"` // "reject" or "redact"
	Audit   string `json:"audit"`   // a file to append to, or "-" for stderr
	Encrypt bool   `json:"encrypt"` // keys from $MEMTOOL_KEY, else $MEMTOOL_KEY_FILE
	Expiry  bool   `json:"expiry"`  // record accesses, for memtool gc
	History *struct {
		MaxVersions int    `json:"max_versions"`
		MaxAge      string `json:"max_age"` // 30d, 12h
	} `json:"history"`
}

func loadPolicy(name string) (*policyFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var p policyFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return &p, nil
}

// A policyStack is a store with the policies applied. Outermost first:
// audit (sees every refusal), secrets (before limits, which then count
// the redacted size), limits, history, expiry, encrypt (innermost, so the
// versions and the access index are encrypted too), the store.
type policyStack struct {
	top          memtool.Store // what Memory runs on
	belowHistory memtool.Store // where memtool history, diff and revert read versions
	belowExpiry  memtool.Store // where memtool gc and restore work
	closers      []io.Closer
}

func (st *policyStack) Close() error {
	var errs []error
	for _, c := range st.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func applyPolicy(base memtool.Store, p *policyFile, tenant string, env *cliEnv) (*policyStack, error) {
	st := &policyStack{}
	s := base
	if p.Encrypt {
		keys, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
		if err != nil {
			return nil, err
		}
		if s, err = encrypt.New(s, keys, &encrypt.Options{Tenant: tenant}); err != nil {
			return nil, err
		}
	}
	st.belowExpiry = s
	if p.Expiry {
		s = expiry.New(s, nil)
	}
	st.belowHistory = s
	if h := p.History; h != nil {
		opts := &versions.Options{MaxVersions: h.MaxVersions}
		if h.MaxAge != "" {
			age, err := parseDays(h.MaxAge)
			if err != nil {
				return nil, fmt.Errorf("policy: history max_age %q: %w", h.MaxAge, err)
			}
			opts.MaxAge = age
		}
		s = versions.New(s, opts)
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
			f, err := os.OpenFile(p.Audit, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return nil, fmt.Errorf("policy: audit log: %w", err)
			}
			st.closers = append(st.closers, f)
			w = f
		}
		s = audit.New(s, w, &audit.Options{Tenant: tenant, OnError: func(err error) {
			fmt.Fprintf(env.stderr, "memtool: audit log: %v\n", err)
		}})
	}
	st.top = s
	return st, nil
}
