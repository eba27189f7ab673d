package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

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
		if _, err := parseDays(h.MaxAge); err != nil {
			return fmt.Errorf("history.max_age: %q: want a duration such as 30d or 12h", h.MaxAge)
		}
	}
	return nil
}

// decodeStrict decodes data, which must hold exactly one JSON object, into
// v, a pointer to a struct, after checking every key and value against
// the struct's fields and their types: see loadPolicy. Strings may not be
// empty and numbers must be whole and not negative; leaving a field out
// is the way to say "none".
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkJSON(dec, reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more data after the first JSON object; the file must hold one object")
	}
	return json.Unmarshal(data, v)
}

// checkJSON reads the next value from dec and checks it against t. where
// names the value (a dotted field path) in errors.
func checkJSON(dec *json.Decoder, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := cmp.Or(where, "the file")
	tok, err := dec.Token()
	if err == io.EOF {
		return fmt.Errorf("%s: empty; want a JSON object", name)
	}
	if err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if tok == nil {
		return fmt.Errorf("%s: null is not a value here; leave the field out instead", name)
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return fmt.Errorf("%s: want a JSON object, got %s", name, jsonTokenKind(tok))
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[tag] = f.Type
			names = append(names, tag)
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%s: invalid JSON: %v", name, err)
			}
			key := tok.(string)
			field := key
			if where != "" {
				field = where + "." + key
			}
			if seen[key] {
				return fmt.Errorf("%s: the key appears twice", field)
			}
			seen[key] = true
			ft, ok := fields[key]
			if !ok {
				for _, n := range names {
					if strings.EqualFold(n, key) {
						return fmt.Errorf("%s: unknown field (keys are lower case: %q)", field, n)
					}
				}
				return fmt.Errorf("%s: unknown field (known: %s)", field, strings.Join(names, ", "))
			}
			if err := checkJSON(dec, ft, field); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("%s: invalid JSON: %v", name, err)
		}
		return nil
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return fmt.Errorf("%s: want true or false, got %s", name, jsonTokenKind(tok))
		}
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s", name, jsonTokenKind(tok))
		}
		if s == "" {
			return fmt.Errorf("%s: empty string; leave the field out instead", name)
		}
	case reflect.Int, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a whole number, got %s", name, jsonTokenKind(tok))
		}
		if i, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil || i < 0 {
			return fmt.Errorf("%s: %s: want a whole number from 0 to %d", name, n, int64(1)<<(t.Bits()-1)-1)
		}
	default:
		panic("checkJSON: no rule for " + t.String())
	}
	return nil
}

// jsonTokenKind says what a JSON token starts, for errors.
func jsonTokenKind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "a list"
		}
		return "an object"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(tok)
	case string:
		return "a string"
	}
	return "null"
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

// openPolicies puts the policy of --policy or $MEMTOOL_POLICY (none if
// neither is set) over raw, the store of the memory that the flags name,
// once keepPolicy has checked it against the policies the store records.
// On error it closes closer; otherwise the stack's Close does.
func openPolicies(ctx context.Context, env *cliEnv, sf *storeFlags, raw memtool.Store, closer io.Closer) (*policyStack, error) {
	st, err := stackPolicies(ctx, env, sf, raw)
	if err != nil {
		closer.Close()
		return nil, err
	}
	st.closers = append(st.closers, closer)
	return st, nil
}

func stackPolicies(ctx context.Context, env *cliEnv, sf *storeFlags, raw memtool.Store) (*policyStack, error) {
	p := &policyFile{}
	if name := cmp.Or(sf.policy, env.getenv("MEMTOOL_POLICY")); name != "" {
		var err error
		if p, err = loadPolicy(name); err != nil {
			return nil, err
		}
	}
	var keys []encrypt.Key
	if p.Encrypt {
		var err error
		if keys, err = encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
			return nil, err
		}
	}
	if err := keepPolicy(ctx, raw, p.record(), sf.tenant); err != nil {
		return nil, fmt.Errorf("store %s: %w", storeLabel(storeURL(sf.store, env), sf.tenant), err)
	}
	return applyPolicy(raw, p, keys, sf.tenant, env)
}

// storeLabel names a memory in messages, with any password masked.
func storeLabel(url, tenant string) string {
	if tenant != "" {
		return redact(url) + " (tenant " + tenant + ")"
	}
	return redact(url)
}

func applyPolicy(base memtool.Store, p *policyFile, keys []encrypt.Key, tenant string, env *cliEnv) (*policyStack, error) {
	st := &policyStack{}
	s := base
	if p.Encrypt {
		var err error
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

// # The policy record
//
// A store remembers which of its policies change what it holds, as it
// remembers its tenancy: in a record claimed on first use and checked on
// every open. Encryption (the files are ciphertext), history (earlier
// versions are kept) and expiry (uses are recorded, and gc trusts them)
// are recorded; a process that opens the store without one of them is
// refused, since it would write plaintext among ciphertext and show
// ciphertext to the model, keep no versions of its changes, or leave its
// uses unrecorded so that gc expires files in use. Limits, secret
// filtering and audit are not recorded: they bound or watch what one
// process does and leave the stored bytes as any process reads them, so
// each process chooses its own. The history options (how many versions,
// how long) are not recorded either.

// recordName is the policy record of a memory, a file in its raw store.
// The path gate refuses names starting with ".memtool", so the model can
// neither read nor change it. It is never encrypted, so that a process
// without the keys learns that the store is encrypted.
const recordName = ".memtool-policy.json"

// policyRecord is what a store records of its policies. A field is never
// turned off once on.
type policyRecord struct {
	Version int  `json:"version"` // recordVersion
	Encrypt bool `json:"encrypt"`
	History bool `json:"history"`
	Expiry  bool `json:"expiry"`
}

const recordVersion = 1

func (p *policyFile) record() policyRecord {
	return policyRecord{Version: recordVersion, Encrypt: p.Encrypt, History: p.History != nil, Expiry: p.Expiry}
}

func (r policyRecord) on() bool { return r.Encrypt || r.History || r.Expiry }

func (r policyRecord) union(o policyRecord) policyRecord {
	return policyRecord{Version: recordVersion, Encrypt: r.Encrypt || o.Encrypt, History: r.History || o.History, Expiry: r.Expiry || o.Expiry}
}

// errPolicy marks a refusal to open a store with policies that do not
// match the ones it records.
var errPolicy = errors.New("policy mismatch")

// readRecord returns the record of the memory in raw and its bytes, or
// found false if it has none.
func readRecord(ctx context.Context, raw memtool.Store) (rec policyRecord, data []byte, found bool, err error) {
	data, err = raw.ReadFile(ctx, recordName, 1<<16)
	if errors.Is(err, memtool.ErrNotExist) {
		return policyRecord{Version: recordVersion}, nil, false, nil
	}
	if err != nil {
		return rec, nil, false, fmt.Errorf("reading its policy record: %w", err)
	}
	if err := decodeStrict(data, &rec); err != nil {
		return rec, nil, false, fmt.Errorf("its policy record %s is not one this memtool reads (written by a newer memtool, or damaged): %v", recordName, err)
	}
	if rec.Version != recordVersion {
		return rec, nil, false, fmt.Errorf("its policy record is version %d; this memtool reads version %d", rec.Version, recordVersion)
	}
	return rec, data, true, nil
}

// missing explains, for each policy that rec records and want lacks, what
// would go wrong without it.
func (rec policyRecord) missing(want policyRecord) []string {
	var out []string
	if rec.Encrypt && !want.Encrypt {
		out = append(out, `it is encrypted, and the policy has no "encrypt": true, so writes would be stored in the clear and reads would show ciphertext; give the policy with "encrypt": true (--policy FILE or $MEMTOOL_POLICY) and its keys ($MEMTOOL_KEY or $MEMTOOL_KEY_FILE)`)
	}
	if rec.History && !want.History {
		out = append(out, `it keeps history, and the policy has no "history", so changes would keep no earlier versions; add "history": {} (or your history options) to the policy`)
	}
	if rec.Expiry && !want.Expiry {
		out = append(out, `it records when files are used, for memtool gc, and the policy has no "expiry": true, so the files used now would look unused and gc could expire them; add "expiry": true to the policy`)
	}
	return out
}

// errRecordChanged: another process changed the record between our read
// and our write.
var errRecordChanged = errors.New("the policy record changed meanwhile")

// keepPolicy checks want, the recorded policies that a process is about to
// open the memory in raw with, against the store's record, and records
// the ones that start now. It refuses (an error wrapping errPolicy)
//
//   - a policy the store records and want lacks (see policyRecord.missing);
//   - encryption for a store that holds an unencrypted file: it would show
//     the model an error for each old file, and nothing here encrypts
//     them in place (memtool migrate --to-policy copies them into a new,
//     encrypted store);
//   - no encryption for a store without a record whose first file is
//     encrypted (a store made before records existed).
//
// History and expiry may start on a store that holds files: versions are
// kept from the next change on, and gc counts a file without a recorded
// use as used at its first run. A store is recorded the first time it is
// opened with one of the recorded policies; one only ever opened without
// them gets no record.
//
// Two processes that open a store without a record at the same moment,
// one with encryption and one without, are not told apart: the check and
// the first write are not one atomic step.
func keepPolicy(ctx context.Context, raw memtool.Store, want policyRecord, tenant string) error {
	for range 8 {
		rec, data, found, err := readRecord(ctx, raw)
		if err != nil {
			return err
		}
		if miss := rec.missing(want); len(miss) > 0 {
			return fmt.Errorf("%w: %s", errPolicy, strings.Join(miss, "; "))
		}
		switch {
		case want.Encrypt && !rec.Encrypt:
			if name, err := findFile(ctx, raw, tenant, true, false); err != nil {
				return err
			} else if name != "" {
				return fmt.Errorf(`%w: it holds unencrypted files (such as %s), and the policy has "encrypt": true; memtool does not encrypt a store in place: copy it into a new, encrypted store with memtool migrate --from STORE --to NEW --to-policy POLICY`, errPolicy, shownName(name))
			}
		case !want.Encrypt && !found:
			if name, err := findFile(ctx, raw, tenant, false, true); err != nil {
				return err
			} else if name != "" {
				return fmt.Errorf(`%w: its files are encrypted (such as %s), and the policy has no "encrypt": true; give the policy with "encrypt": true and its keys ($MEMTOOL_KEY or $MEMTOOL_KEY_FILE)`, errPolicy, shownName(name))
			}
		}
		next := rec.union(want)
		if found && next == rec || !found && !want.on() {
			return nil
		}
		err = writeRecord(ctx, raw, data, found, next)
		switch {
		case errors.Is(err, errRecordChanged):
			continue
		case err != nil:
			return fmt.Errorf("recording its policies: %w", err)
		}
		return nil
	}
	return fmt.Errorf("its policy record kept changing while memtool opened it: %w", memtool.ErrBusy)
}

// writeRecord replaces the record old (the bytes read, if found) with
// next, or fails with errRecordChanged if it is not old any more.
func writeRecord(ctx context.Context, raw memtool.Store, old []byte, found bool, next policyRecord) error {
	data, err := json.Marshal(next)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if !found {
		err := raw.WriteFile(ctx, recordName, data, memtool.CreateOnly)
		if errors.Is(err, memtool.ErrExist) {
			return errRecordChanged
		}
		return err
	}
	return raw.Update(ctx, recordName, 1<<16, func(cur []byte) ([]byte, error) {
		if !bytes.Equal(cur, old) {
			return nil, errRecordChanged
		}
		return data, nil
	})
}

// findFile looks for a file of the memory in raw (its policies' data
// included) that is, if plain is true, unencrypted, and otherwise
// encrypted, and returns its name or "". With first, it looks at the
// first file it can read only, and a failure to walk the store is no
// error: that is the best-effort look at a store from before records,
// which runs on every open of a store without a record and must not make
// a store that opened before fail.
func findFile(ctx context.Context, raw memtool.Store, tenant string, plain, first bool) (string, error) {
	probe, err := probeStore(raw, tenant)
	if err != nil {
		return "", err
	}
	var found string
	err = walkMemory(ctx, raw, func(name string, fi memtool.FileInfo) error {
		if !fi.IsRegular() {
			return nil
		}
		_, err := probe.ReadFile(ctx, name, 1<<62)
		isPlain := errors.Is(err, encrypt.ErrNotEncrypted)
		sealed := err == nil || errors.Is(err, encrypt.ErrUnknownKey) || errors.Is(err, encrypt.ErrAuth)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case !isPlain && !sealed:
			return nil // unreadable: no answer
		case isPlain == plain:
			found = name
			return errStopWalk
		case first:
			return errStopWalk
		}
		return nil
	})
	switch {
	case errors.Is(err, errStopWalk), first && ctx.Err() == nil:
		err = nil
	}
	return found, err
}

// probeStore wraps raw in encryption with a key of its own, made for the
// call: reading a file through it fails with encrypt.ErrNotEncrypted if
// the file is plaintext, and otherwise with ErrUnknownKey or ErrAuth, and
// so tells the two apart without the store's keys.
func probeStore(raw memtool.Store, tenant string) (memtool.Store, error) {
	key, err := encrypt.NewKey("memtool-probe")
	if err != nil {
		return nil, err
	}
	return encrypt.New(raw, []encrypt.Key{key}, &encrypt.Options{Tenant: tenant})
}

// shownName is how messages name an entry of a raw store: a memory's file
// by its virtual path, a policy's own entry by its name.
func shownName(name string) string {
	if strings.HasPrefix(name, ".memtool") {
		return name
	}
	return memtool.VirtualPath(name)
}

// # What a store holds

// historyDir is package history's directory of versions in a store.
const historyDir = ".memtool-history"

// policyData are the entries that policies keep beside a memory in its
// store, under names that the path gate refuses and that the file store
// and the object stores leave out of their listings, so they are looked
// for by name.
var policyData = []string{historyDir, expiry.IndexName, expiry.TrashName}

// errStopWalk ends a walkMemory early; walkMemory returns it.
var errStopWalk = errors.New("stop the walk")

// walkMemory calls fn for every directory and file of the memory in raw
// and of its policies' data, as wholeStore(raw) lists them: parents
// before their entries, in name order, the memory's entries first.
func walkMemory(ctx context.Context, raw memtool.Store, fn func(name string, fi memtool.FileInfo) error) error {
	w := &wholeView{raw}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := w.ReadDir(ctx, dir)
		if err != nil {
			return err
		}
		policy := func(e memtool.FileInfo) int {
			if dir == "" && strings.HasPrefix(e.Name, ".memtool") {
				return 1
			}
			return 0
		}
		slices.SortFunc(entries, func(a, b memtool.FileInfo) int {
			return cmp.Or(cmp.Compare(policy(a), policy(b)), strings.Compare(a.Name, b.Name))
		})
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			if err := fn(name, e); err != nil {
				return err
			}
			if e.IsDir() {
				if err := walk(name); err != nil && !errors.Is(err, memtool.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	}
	return walk("")
}

// openRawStore opens the memory that the flags name below its policies,
// for memtool rekey, which wraps it in encryption itself. A store that
// records no encryption is refused. The store it returns shows the
// memory and its policies' data as one tree (so a walk over it, as
// encrypt.Rekey does, rewrites the versions and the access index too,
// which the file store and the object stores leave out of listings) and
// leaves out the policy record, which is never encrypted.
func openRawStore(ctx context.Context, env *cliEnv, sf *storeFlags) (memtool.Store, io.Closer, error) {
	url := storeURL(sf.store, env)
	raw, closer, err := openStore(ctx, url, sf.tenant, false)
	if err != nil {
		return nil, nil, err
	}
	rec, _, found, err := readRecord(ctx, raw)
	if err == nil && found && !rec.Encrypt {
		err = fmt.Errorf("%w: it is not encrypted (its policy record says so)", errPolicy)
	}
	if err != nil {
		closer.Close()
		return nil, nil, fmt.Errorf("store %s: %w", storeLabel(url, sf.tenant), err)
	}
	return wholeStore(raw), closer, nil
}

// wholeStore returns raw with its root listing changed: every policy's
// data that is there (policyData) is listed, whether raw lists it or not,
// and the policy record is not. Another root entry starting with
// ".memtool", which some stores list, fails the listing: some policy this
// memtool does not know keeps data there, and what walks the store (a
// copy, a rekey) would leave it behind.
func wholeStore(raw memtool.Store) memtool.Store {
	w := &wholeView{raw}
	return memtool.WithCapabilitiesOf(raw, w, func(ctx context.Context, o, n string) error {
		return raw.(memtool.Renamer).Rename(ctx, o, n)
	}, func(ctx context.Context, name string) error {
		return raw.(memtool.RemoveAller).RemoveAll(ctx, name)
	})
}

type wholeView struct{ raw memtool.Store }

func (w *wholeView) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := w.raw.ReadDir(ctx, name)
	if err != nil || name != "" {
		return entries, err
	}
	var memory []memtool.FileInfo
	for _, e := range entries {
		switch {
		case !strings.HasPrefix(e.Name, ".memtool"):
			memory = append(memory, e)
		case e.Name != recordName && !slices.Contains(policyData, e.Name):
			return nil, fmt.Errorf("the store holds %s, which this memtool does not know", e.Name)
		}
	}
	entries = memory
	for _, n := range policyData {
		fi, err := w.raw.Stat(ctx, n)
		if errors.Is(err, memtool.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		fi.Name = n
		entries = append(entries, fi)
	}
	return entries, nil
}

func (w *wholeView) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return w.raw.Stat(ctx, name)
}

func (w *wholeView) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return w.raw.ReadFile(ctx, name, limit)
}

func (w *wholeView) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return w.raw.WriteFile(ctx, name, data, mode)
}

func (w *wholeView) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return w.raw.Update(ctx, name, limit, fn)
}

func (w *wholeView) Mkdir(ctx context.Context, name string) error { return w.raw.Mkdir(ctx, name) }

func (w *wholeView) Remove(ctx context.Context, name string) error { return w.raw.Remove(ctx, name) }
