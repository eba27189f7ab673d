package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
)

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

// names lists the recorded policies.
func (r policyRecord) names() []string {
	var out []string
	for _, p := range []struct {
		on   bool
		name string
	}{{r.Encrypt, "encrypt"}, {r.History, "history"}, {r.Expiry, "expiry"}} {
		if p.on {
			out = append(out, p.name)
		}
	}
	return out
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
	return checkPolicy(ctx, raw, want, tenant, true)
}

// checkPolicy is keepPolicy, which records the policies that start now
// only if record; without it (for gc --dry-run, which changes nothing),
// it only checks.
func checkPolicy(ctx context.Context, raw memtool.Store, want policyRecord, tenant string, record bool) error {
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
		if found && next == rec || !found && !want.on() || !record {
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
	probe, err := newProber(raw, tenant)
	if err != nil {
		return "", err
	}
	defer probe.close()
	if first {
		// Most stores answer from their first file: find it without
		// looking at every entry of the directories on the way.
		name := probe.firstRead(ctx)
		if name == "" {
			name = firstListed(ctx, raw, "", 0)
		}
		if name != "" {
			if isPlain, sealed := probe.file(ctx, name); isPlain || sealed {
				if isPlain == plain {
					return name, nil
				}
				return "", nil
			}
		}
	}
	var found string
	err = walkMemory(ctx, raw, func(name string, fi memtool.FileInfo) error {
		if !fi.IsRegular() {
			return nil
		}
		isPlain, sealed := probe.file(ctx, name)
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

// A prober tells an encrypted file from a plaintext one without the
// store's keys: it reads the file through encryption with a key of its
// own, made for the call, which fails with encrypt.ErrNotEncrypted if the
// file is plaintext, and otherwise with ErrUnknownKey or ErrAuth. On a
// directory store it reads only the file's first encrypt.Overhead bytes
// (through a memory store, so that encryption judges them as it judges a
// whole file: the answer depends on the size up to Overhead, the header
// and nothing after), so that opening a store whose first file is large
// does not read it whole.
type prober struct {
	raw    memtool.Store
	tenant string
	key    encrypt.Key
	probe  memtool.Store // raw through encryption with key
	root   *os.Root      // the directory store's directory, or nil
}

func newProber(raw memtool.Store, tenant string) (*prober, error) {
	key, err := encrypt.NewKey("memtool-probe")
	if err != nil {
		return nil, err
	}
	probe, err := encrypt.New(raw, []encrypt.Key{key}, &encrypt.Options{Tenant: tenant})
	if err != nil {
		return nil, err
	}
	p := &prober{raw: raw, tenant: tenant, key: key, probe: probe}
	if fsStore, ok := raw.(*filestore.Store); ok {
		p.root, _ = os.OpenRoot(fsStore.Dir()) // on failure, files are read whole
	}
	return p, nil
}

func (p *prober) close() {
	if p.root != nil {
		p.root.Close()
	}
}

// file says whether the file name is stored unencrypted or encrypted;
// neither when it cannot be read.
func (p *prober) file(ctx context.Context, name string) (isPlain, sealed bool) {
	var err error
	if head, ok := p.head(name); ok {
		mem := memstore.New()
		var probe memtool.Store
		if err = mem.WriteFile(ctx, "probe", head, memtool.CreateOnly); err == nil {
			probe, err = encrypt.New(mem, []encrypt.Key{p.key}, &encrypt.Options{Tenant: p.tenant})
		}
		if err == nil {
			_, err = probe.ReadFile(ctx, "probe", 1<<62)
		}
	} else {
		_, err = p.probe.ReadFile(ctx, name, 1<<62)
	}
	isPlain = errors.Is(err, encrypt.ErrNotEncrypted)
	sealed = err == nil || errors.Is(err, encrypt.ErrUnknownKey) || errors.Is(err, encrypt.ErrAuth)
	return isPlain, sealed
}

// head returns the first encrypt.Overhead bytes of the file name of a
// directory store (all of it if shorter), once raw's Stat says it is a
// regular file; ok is false on any other store or failure, and the file
// is then read through raw.
func (p *prober) head(name string) (data []byte, ok bool) {
	if p.root == nil {
		return nil, false
	}
	if fi, err := p.raw.Stat(context.Background(), name); err != nil || !fi.IsRegular() {
		return nil, false
	}
	// O_NONBLOCK: a FIFO put there since the Stat does not block the open.
	f, err := p.root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	buf := make([]byte, encrypt.Overhead)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, false
	}
	return buf[:n], true
}

// firstBatch is how many names of a directory store's root firstRead
// looks at.
const firstBatch = 256

// firstRead returns, on a directory store, the smallest name among the
// regular files in the first firstBatch names its root directory gives
// (in the directory's own order, one getdents), or "" (none there, or
// another store). It costs the same on a root of 100,000 files as on one
// of ten; the caller falls back to firstListed.
func (p *prober) firstRead(ctx context.Context) string {
	if p.root == nil {
		return ""
	}
	d, err := p.root.Open(".")
	if err != nil {
		return ""
	}
	entries, _ := d.ReadDir(firstBatch)
	d.Close()
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && !filestore.OwnName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if fi, err := p.raw.Stat(ctx, n); err == nil && fi.IsRegular() {
			return n
		}
	}
	return ""
}

// firstListed returns the first regular file of the memory in raw in
// walkMemory's order (depth first, names in byte order), or "". It works
// only on a store that lists names cheaply (memtool.NameLister) and stats
// the entries one by one until it finds a file, so that opening a store
// whose root holds 100,000 files costs about what opening one of ten
// does; on any other store, or when it finds nothing, it returns "" and
// the caller walks the store.
func firstListed(ctx context.Context, raw memtool.Store, dir string, depth int) string {
	var names []string
	err := memtool.ForwardListNames(ctx, raw, dir, func(n string) bool {
		names = append(names, n)
		return true
	})
	if err != nil || len(names) == 0 {
		return ""
	}
	// The first name is usually a file: find it without sorting them all.
	first := slices.Min(names)
	if fi, err := raw.Stat(ctx, path.Join(dir, first)); err == nil && fi.IsRegular() {
		return path.Join(dir, first)
	}
	slices.Sort(names)
	for _, n := range names {
		name := path.Join(dir, n)
		fi, err := raw.Stat(ctx, name)
		switch {
		case err != nil:
		case fi.IsRegular():
			return name
		case fi.IsDir() && depth < 16:
			if f := firstListed(ctx, raw, name, depth+1); f != "" {
				return f
			}
		}
	}
	return ""
}

// shownName is how messages name an entry of a raw store: a memory's file
// by its virtual path, a policy's own entry by its name.
func shownName(name string) string {
	if strings.HasPrefix(name, ".memtool") {
		return name
	}
	return memtool.VirtualPath(name)
}
