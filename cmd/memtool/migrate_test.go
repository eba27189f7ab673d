package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
)

// runMigrateBinary runs `memtool migrate args...` and returns its output
// and exit status.
func runMigrateBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runMemtool(t, childEnv(), "", append([]string{"migrate"}, args...)...)
}

// migrateOK runs a migration that must succeed quietly: a summary on
// stdout, nothing on stderr (it is no terminal, so no progress bar).
func migrateOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runMigrateBinary(t, args...)
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "copied ") {
		t.Fatalf("memtool migrate %q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

// seedTree fills the memory at url (tenant, or none) with files of every
// kind of content and with empty directories.
func seedTree(t *testing.T, url, tenant string) {
	t.Helper()
	ctx := context.Background()
	s := openTestStore(t, url, tenant)
	for _, d := range []string{"notes", "notes/2026", "empty", "deep", "deep/er", "deep/er/est", "x y"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{
		"top.md":                 []byte("# top\n"),
		"notes/2026/nov.md":      []byte("line 1\nline 2\n"),
		"notes/empty.txt":        {},
		"deep/er/est/binary.bin": {0, 0xff, 0xfe, '\n', 0x80, 0},
		"x y/ünïcödé – name.txt": []byte("tenant " + tenant),
		"deep/er/big.txt":        bytes.Repeat([]byte("0123456789abcdef"), 64<<10), // 1 MiB
	}
	for name, data := range files {
		if err := s.WriteFile(ctx, name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
}

// seededSource returns a new temporary directory and the directory store
// "src" in it, which seedTree has filled for each of tenants ("" for a
// store without tenants).
func seededSource(t *testing.T, tenants ...string) (tmp, src string) {
	t.Helper()
	tmp = t.TempDir()
	src = filepath.Join(tmp, "src")
	for _, id := range tenants {
		seedTree(t, src, id)
	}
	return tmp, src
}

// diskTree describes the memory in a directory on disk, byte for byte:
// every directory, and every file with its content. The store's own
// names are left out.
func diskTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if filestore.OwnName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %q", rel, data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func sameTree(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) < 10 {
		t.Fatalf("the source tree has only %d entries", len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the tree after the migrations differs:\n got: %.2000q\nwant: %.2000q", got, want)
	}
}

// TestMigrateChain copies one memory through every kind of backend, with
// the real binary: directory → SQLite → gocloud directory bucket → S3 (an
// in-process S3-compatible server) → directory, and compares the first
// and last directories byte for byte.
func TestMigrateChain(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	chain := []string{
		src,
		"sqlite://" + filepath.Join(tmp, "m.db"),
		"file+blob://" + filepath.Join(tmp, "bucket"),
		s3URL(t, "migrated"),
		filepath.Join(tmp, "dst"),
	}
	for i := 1; i < len(chain); i++ {
		out := migrateOK(t, "--from", chain[i-1], "--to", chain[i])
		if !strings.Contains(out, "copied 6 files (1.0 MiB) and 7 directories") {
			t.Errorf("summary %q does not say what was copied", out)
		}
	}
	sameTree(t, diskTree(t, chain[len(chain)-1]), diskTree(t, src))
}

// TestMigrateAllTenants copies every tenant of a directory store through
// an object store and SQLite, and back.
func TestMigrateAllTenants(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice", "bob")
	bucket := "file+blob://" + filepath.Join(tmp, "bucket") + "?prefix=all"
	dst := filepath.Join(tmp, "dst")
	if out := migrateOK(t, "--from", src, "--to", bucket, "--all-tenants"); !strings.Contains(out, "of 2 tenants") {
		t.Errorf("summary %q", out)
	}
	db := "sqlite://" + filepath.Join(tmp, "all.db")
	if out := migrateOK(t, "--from", bucket, "--to", db, "--all-tenants"); !strings.Contains(out, "of 2 tenants") {
		t.Errorf("summary %q", out)
	}
	migrateOK(t, "--from", db, "--to", dst, "--all-tenants")
	for _, id := range []string{"alice", "bob"} {
		sameTree(t, diskTree(t, filepath.Join(dst, filestore.TenantsDir, id)), diskTree(t, filepath.Join(src, filestore.TenantsDir, id)))
	}
	// One tenant alone, into a new store.
	one := filepath.Join(tmp, "one")
	migrateOK(t, "--from", bucket, "--to", one, "--tenant", "bob")
	if names := dirNames(t, filepath.Join(one, filestore.TenantsDir)); !slices.Equal(names, []string{"bob"}) {
		t.Errorf("--tenant bob made tenants %q", names)
	}
	sameTree(t, diskTree(t, filepath.Join(one, filestore.TenantsDir, "bob")), diskTree(t, filepath.Join(src, filestore.TenantsDir, "bob")))
}

func TestMigrateRefusesNonEmptyTarget(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	dst := filepath.Join(tmp, "dst")
	execMemtool(t, jsonLine(createInput("/memories/top.md", "keep me")), "--store", dst)
	before := diskTree(t, dst)
	out, errOut, code := runMigrateBinary(t, "--from", src, "--to", dst)
	if code != exitFailed || out != "" || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "--force") {
		t.Fatalf("migrate into a non-empty target: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if after := diskTree(t, dst); !slices.Equal(after, before) {
		t.Fatalf("the refused migration changed the target: %q", after)
	}
	migrateOK(t, "--from", src, "--to", dst, "--force")
	sameTree(t, diskTree(t, dst), diskTree(t, src))

	// A source that is not there is refused, not created empty.
	missing := filepath.Join(tmp, "typo")
	if _, errOut, code := runMigrateBinary(t, "--from", missing, "--to", filepath.Join(tmp, "new")); code != exitStore || !strings.Contains(errOut, "does not exist") {
		t.Errorf("missing source: exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("migrate created the missing source")
	}
}

// corruptingStore is a test-only store whose WriteFile of one name flips
// the first byte it stores, as a faulty backend or network could.
type corruptingStore struct {
	memtool.Store
	name string
}

func (s corruptingStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name == s.name {
		data = slices.Clone(data)
		data[0] ^= 1
	}
	return s.Store.WriteFile(ctx, name, data, mode)
}

func TestMigrateVerifiesChecksums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := memstore.New()
	for _, d := range []string{"a", "a/b"} {
		if err := src.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/one.txt", "a/b/two.txt", "three.txt"} {
		if err := src.WriteFile(ctx, f, []byte("content of "+f), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	p, err := planCopy(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	prog := newProgress(new(bytes.Buffer), len(p.files), p.bytes)
	if _, err := copyStore(ctx, src, memstore.New(), p, false, prog); err != nil {
		t.Fatalf("a faithful target: %v", err)
	}
	_, err = copyStore(ctx, src, corruptingStore{memstore.New(), "a/b/two.txt"}, p, false, prog)
	if err == nil || !strings.Contains(err.Error(), "verification failed") || !strings.Contains(err.Error(), "/memories/a/b/two.txt") {
		t.Fatalf("a target that corrupts a/b/two.txt: %v, want a verification failure naming it", err)
	}
	if strings.Contains(err.Error(), "one.txt") || strings.Contains(err.Error(), "three.txt") {
		t.Errorf("the error names intact files: %v", err)
	}
}

// TestMigrateProgress checks the bar that a terminal sees, and that
// anything else sees none.
func TestMigrateProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf, 4, 4096)
	p.add(1024)
	p.done()
	if buf.Len() != 0 {
		t.Fatalf("a progress bar on a writer that is no terminal: %q", buf.String())
	}
	p = &progress{w: &buf, files: 4, total: 4096}
	p.add(1024)
	p.add(1024)
	p.done()
	// Each drawing returns to the start of the line and clears it (ESC[K).
	if got, want := buf.String(), "\r\x1b[Kmigrating [===============               ] 2/4 files, 2.0 KiB/4.0 KiB\n"; !strings.HasSuffix(got, want) {
		t.Errorf("bar %q, want it to end with %q", got, want)
	}
}

// seedPolicies makes a memory at dir with the policies of env: a file
// with an earlier version (history), the access index (expiry), a file in
// the trash of gc and one restored from it, and the policy record.
func seedPolicies(t *testing.T, dir string, env []string) {
	t.Helper()
	for _, args := range [][]string{
		{"create", "--text", "v1", "/memories/a.md"},
		{"str_replace", "--old", "v1", "--new", "v2", "/memories/a.md"},
		{"create", "--text", "to the trash", "/memories/d/old.md"},
		{"create", "--text", "back again", "/memories/d/back.md"},
	} {
		if _, stderr, code := runOn(t, env, dir, args...); code != 0 {
			t.Fatalf("%q: %s", args, stderr)
		}
	}
	// gc three days from now, in this process, on the stack of the policy.
	st := openVia(t, dir, env)
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(72 * time.Hour) }
	if rep, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 24 * time.Hour, Now: later}); err != nil || len(rep.Expired) != 3 {
		t.Fatalf("gc: %+v, %v", rep, err)
	}
	for _, p := range []string{"/memories/a.md", "/memories/d/back.md"} {
		if _, err := expiry.Restore(ctx, st.belowExpiry, p, later()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateCarriesPolicyData: migrate copies what the policies keep
// beside the memory (the versions of history, the access index and trash
// of expiry, the policy record), through SQLite (which lists such
// entries) and an object store (which hides them) and back, byte for
// byte; encrypted, it copies the ciphertext, which the keys still open.
// The copy works with the policy and refuses to open without it.
func TestMigrateCarriesPolicyData(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	for _, c := range []struct{ name, policy string }{
		{"plain", `{"history":{},"expiry":true}`},
		{"encrypted", `{"encrypt":true,"history":{},"expiry":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
			env := policyEnv(t, c.policy, key)
			seedPolicies(t, src, env)
			chain := []string{src, "sqlite://" + filepath.Join(tmp, "m.db"), "file+blob://" + filepath.Join(tmp, "bucket"), dst}
			for i := 1; i < len(chain); i++ {
				out := migrateOK(t, "--from", chain[i-1], "--to", chain[i])
				if !strings.Contains(out, "copied 2 files") || !strings.Contains(out, "history, expiry and ") {
					t.Errorf("summary %q", out)
				}
			}
			want := diskTree(t, src)
			for _, name := range []string{recordName, expiry.IndexName, historyDir + "/", expiry.TrashName + "/"} {
				if !slices.ContainsFunc(want, func(e string) bool { return strings.HasPrefix(e, name) }) {
					t.Fatalf("the source holds no %s: %q", name, want)
				}
			}
			sameTree(t, diskTree(t, dst), want)

			for _, args := range [][]string{{"history", "/memories/a.md"}, {"restore", "--list"}, {"view", "/memories/d/back.md"}} {
				out, stderr, code := runOn(t, env, dst, args...)
				if code != 0 || out == "" {
					t.Errorf("%q on the copy: exit %d, %q, %q", args, code, out, stderr)
				}
			}
			if _, stderr, code := runMemtoolEnv(t, nil, "view", "--store", dst, "/memories/a.md"); code != exitStore || !strings.Contains(stderr, "policy mismatch") {
				t.Errorf("the copy without the policy: exit %d, %s", code, stderr)
			}
		})
	}
}

// TestMigrateToPolicy: --to-policy turns policies on in the copy: here
// encryption, so that the plaintext source (its versions and access index
// included) arrives encrypted, and opens with the keys. It may not drop a
// policy of the source, nor encrypt a file twice.
func TestMigrateToPolicy(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	plain := policyEnv(t, `{"history":{},"expiry":true}`, key)
	seedPolicies(t, src, plain)
	sealed := policyEnv(t, `{"encrypt":true,"history":{},"expiry":true}`, key)
	policyFile := strings.TrimPrefix(sealed[0], "MEMTOOL_POLICY=")
	if _, stderr, code := runMemtoolEnv(t, nil, "migrate", "--from", src, "--to", dst, "--to-policy", policyFile); code != exitUsage || !strings.Contains(stderr, "MEMTOOL_KEY") {
		t.Errorf("--to-policy with encrypt and no key: exit %d, %s", code, stderr)
	}
	out, stderr, code := runMemtoolEnv(t, sealed[1:], "migrate", "--from", src, "--to", dst, "--to-policy", policyFile)
	if code != 0 || !strings.Contains(out, "with the policies encrypt, history, expiry") {
		t.Fatalf("migrate --to-policy: exit %d, %q, %q", code, out, stderr)
	}
	// Two-byte texts would turn up by chance in the ciphertext (the test
	// once failed so, one run in a few dozen): the files that held them
	// must hold something else, the longer ones be nowhere.
	for _, text := range []string{"back again", "to the trash", "a.md"} {
		if storeHolds(t, dst, text) {
			t.Errorf("the encrypted copy holds %q in the clear", text)
		}
	}
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if data, _ := os.ReadFile(p); err == nil && d.Type().IsRegular() && (string(data) == "v1" || string(data) == "v2") {
			t.Errorf("the encrypted copy's %s holds %q in the clear", p, data)
		}
		return nil
	})
	if out, stderr, code := runMemtoolEnv(t, sealed, "diff", "--store", dst, "/memories/a.md"); code != 0 || !strings.Contains(out, "-v1") {
		t.Errorf("diff on the encrypted copy: exit %d, %q, %q", code, out, stderr)
	}
	if out, stderr, code := runMemtoolEnv(t, sealed, "restore", "--store", dst, "--list"); code != 0 || !strings.Contains(out, "/memories/d/old.md") {
		t.Errorf("restore --list on the encrypted copy: exit %d, %q, %q", code, out, stderr)
	}

	historyOnly := strings.TrimPrefix(policyEnv(t, `{"history":{}}`, key)[0], "MEMTOOL_POLICY=")
	if _, stderr, code := runMemtoolEnv(t, nil, "migrate", "--from", src, "--to", filepath.Join(tmp, "x"), "--to-policy", historyOnly); code != exitUsage || !strings.Contains(stderr, "migrate does not drop a policy") {
		t.Errorf("--to-policy without the source's expiry: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runMemtoolEnv(t, sealed[1:], "migrate", "--from", dst, "--to", filepath.Join(tmp, "y"), "--to-policy", policyFile); code != 0 {
		t.Errorf("--to-policy with the source's own policies: exit %d, %s", code, stderr)
	}

	// Files encrypted already, where the source records no encryption (a
	// store from before records, or one file put there around memtool),
	// are not taken for plaintext.
	legacy, mixed := filepath.Join(tmp, "legacy"), filepath.Join(tmp, "mixed")
	if _, stderr, code := runOn(t, policyEnv(t, `{"history":{}}`, key), mixed, "create", "--text", "plain", "/memories/a.md"); code != 0 {
		t.Fatal(stderr)
	}
	for _, dir := range []string{legacy, mixed} {
		writeSealed(t, dir, key, "sealed.md", "sealed")
	}
	for dir, want := range map[string]string{
		legacy: "the source's files are encrypted (such as /memories/sealed.md), but it has no policy record",
		mixed:  "the source's file /memories/sealed.md is encrypted already, but the source records no encryption",
	} {
		out, stderr, code := runMemtoolEnv(t, sealed[1:], "migrate", "--from", dir, "--to", dir+"-copy", "--to-policy", policyFile)
		if code != exitFailed || !strings.Contains(stderr, want) {
			t.Errorf("migrate --to-policy from %s: exit %d, %q, %q; want %q", filepath.Base(dir), code, out, stderr, want)
		}
	}
}

// TestMigrateRefusesWhatItCannotCarry: entries of a policy this memtool
// does not know, beside the memory, and the policy data of both source
// and target (which migrate would have to merge) make migrate refuse
// before it writes anything.
func TestMigrateRefusesWhatItCannotCarry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp, src := seededSource(t, "")
	os.Mkdir(filepath.Join(src, ".memtool-future"), 0o700)
	db := "sqlite://" + filepath.Join(tmp, "src.db")
	seedTree(t, db, "")
	if err := openTestStore(t, db, "").Mkdir(ctx, ".memtool-future"); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{src, db} {
		dst := filepath.Join(tmp, "dst")
		out, stderr, code := runMigrateBinary(t, "--from", from, "--to", dst)
		if code != exitFailed || out != "" || !strings.Contains(stderr, ".memtool-future, which this memtool does not know") {
			t.Errorf("migrate from %s: exit %d, %q, %q", from, code, out, stderr)
		}
		if _, err := os.Stat(dst); err == nil && len(diskTree(t, dst)) > 0 {
			t.Errorf("the refused migration wrote %q", diskTree(t, dst))
		}
	}

	key, _ := encrypt.NewKey("k1")
	env := policyEnv(t, `{"history":{},"expiry":true}`, key)
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	seedPolicies(t, a, env)
	seedPolicies(t, b, env)
	before := diskTree(t, b)
	if _, stderr, code := runMigrateBinary(t, "--from", a, "--to", b, "--force"); code != exitFailed || !strings.Contains(stderr, "migrate does not merge") {
		t.Errorf("--force onto a target with policy data: exit %d, %s", code, stderr)
	}
	if after := diskTree(t, b); !slices.Equal(after, before) {
		t.Errorf("the refused migration changed the target")
	}
}

// TestMigrateKeepsTenancy: the copy of a single-tenant store is
// single-tenant, that of tenants multi-tenant, on a target that records
// it (SQLite).
func TestMigrateKeepsTenancy(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	single, multi := filepath.Join(tmp, "single"), filepath.Join(tmp, "multi")
	seedTree(t, single, "")
	seedTree(t, multi, "alice")
	for _, c := range []struct {
		from  string
		flags []string
		wrong []string
	}{
		{single, nil, []string{"--tenant", "alice"}},
		{multi, []string{"--all-tenants"}, nil},
	} {
		db := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
		migrateOK(t, append([]string{"--from", c.from, "--to", db}, c.flags...)...)
		if _, stderr, code := runMemtoolEnv(t, nil, append([]string{"view", "--store", db}, append(c.wrong, "/memories")...)...); code != exitStore || !strings.Contains(stderr, "tenancy mismatch") {
			t.Errorf("the copy of %s opened with %q: exit %d, %s", c.from, c.wrong, code, stderr)
		}
	}
}

// TestMigrateRefusesOverlap: a target that is the source under another
// spelling, inside it, or around it is refused before anything is
// written: a copy into the source's own directory once changed the
// source (it gained a copy of itself, or with --force a file of the
// source was replaced by another of its files).
func TestMigrateRefusesOverlap(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	inner := filepath.Join(src, "deep")
	before, beforeInner := diskTree(t, src), diskTree(t, inner)
	if err := os.Symlink(src, filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to string
		force    bool
	}{
		{src, filepath.Join(src, "copy"), false},               // inside the source
		{src, "sqlite://" + filepath.Join(src, "m.db"), false}, // a file inside the source
		{src, "file://" + src, true},                           // the same directory, spelt otherwise
		{src, src + "/", true},
		{src, filepath.Join(tmp, "link"), true},           // the same directory through a link
		{src, filepath.Join(tmp, "link", "new"), false},   // inside it through a link
		{inner, src, true},                                // around the source
		{"helper:" + filepath.Dir(src), src + "x", false}, // not overlapping: refused for another reason or copied
	} {
		args := []string{"--from", c.from, "--to", c.to}
		if c.force {
			args = append(args, "--force")
		}
		out, errOut, code := runCLI(t, nil, "", append([]string{"migrate"}, args...)...)
		if strings.HasPrefix(c.from, "helper:") {
			if strings.Contains(errOut, "overlap") {
				t.Errorf("migrate %q: %s", args, errOut)
			}
			continue
		}
		if code != exitUsage || out != "" || !strings.Contains(errOut, "overlap") {
			t.Errorf("migrate %q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		if after := diskTree(t, src); !slices.Equal(after, before) {
			t.Fatalf("migrate %q changed the source:\n got: %.1000q\nwant: %.1000q", args, after, before)
		}
		if after := diskTree(t, inner); !slices.Equal(after, beforeInner) {
			t.Fatalf("migrate %q changed %s", args, inner)
		}
	}
}

// TestMigrateForceCompletesAFailedCopy: after a migration of a store with
// policy data fails midway, rerunning it with --force (as the README
// says) completes the copy: the target's policy data is the part of the
// source's that was copied, not another store's to merge.
func TestMigrateForceCompletesAFailedCopy(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	key, _ := encrypt.NewKey("k1")
	env := policyEnv(t, `{"history":{},"expiry":true}`, key)
	src := filepath.Join(tmp, "src")
	seedPolicies(t, src, env)
	// file+blob cannot store this name: the first run fails on it.
	if _, stderr, code := runOn(t, env, src, "create", "--text", "x", "/memories/z.attrs"); code != 0 {
		t.Fatal(stderr)
	}
	bucket := "file+blob://" + filepath.Join(tmp, "bucket")
	if _, stderr, code := runMigrateBinary(t, "--from", src, "--to", bucket); code != exitFailed || !strings.Contains(stderr, "z.attrs") {
		t.Fatalf("the first run: exit %d, %s", code, stderr)
	}
	// Out of the way, through the policies (history keeps a version).
	if _, stderr, code := runOn(t, env, src, "rename", "/memories/z.attrs", "/memories/z.txt"); code != 0 {
		t.Fatal(stderr)
	}
	if out, stderr, code := runMigrateBinary(t, "--from", src, "--to", bucket, "--force"); code != 0 || !strings.HasPrefix(out, "copied ") {
		t.Fatalf("the rerun with --force: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	dst := filepath.Join(tmp, "dst")
	migrateOK(t, "--from", bucket, "--to", dst)
	sameTree(t, diskTree(t, dst), diskTree(t, src))
}

// TestMigrateRefusedCreatesNothing: a migration refused for what the
// source holds or for the flags creates no target, and claims no tenancy
// in one: it once created the target (an empty directory, an SQLite file
// marked multi-tenant by --tenant) before it refused.
func TestMigrateRefusedCreatesNothing(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	policy := filepath.Join(tmp, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"encrypt":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(tmp, "odd")
	seedTree(t, odd, "")
	if err := os.Mkdir(filepath.Join(odd, ".memtool-future"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--from", src, "--to", filepath.Join(tmp, "dst1"), "--to-policy", policy}, exitUsage}, // no key
		{[]string{"--from", src, "--to", "sqlite://" + filepath.Join(tmp, "dst2", "m.db"), "--to-policy", policy}, exitUsage},
		{[]string{"--from", odd, "--to", filepath.Join(tmp, "dst3")}, exitFailed},
	} {
		_, stderr, code := runCLI(t, nil, "", append([]string{"migrate"}, c.args...)...)
		if code != c.code {
			t.Errorf("migrate %q: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
	}
	for _, name := range []string{"dst1", "dst2", "dst3"} {
		if _, err := os.Stat(filepath.Join(tmp, name)); err == nil {
			t.Errorf("a refused migration created %s", name)
		}
	}
}
