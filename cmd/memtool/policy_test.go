package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
)

func TestPolicyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "memories")
	key, _ := encrypt.NewKey("k1")
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"limits":{"max_file_size":100},"secrets":"reject","audit":"`+filepath.Join(dir, "audit.jsonl")+`","encrypt":true,"expiry":true,"history":{"max_versions":5,"max_age":"30d"}}`), 0o600)
	var out, errb bytes.Buffer
	env := &cliEnv{
		stdin: strings.NewReader(`{"command":"create","path":"/memories/a.md","file_text":"tea, no sugar"}
{"command":"create","path":"/memories/b.md","file_text":"` + strings.Repeat("x", 101) + `"}
{"command":"create","path":"/memories/c.md","file_text":"AKIA` + `IOSFODNN7EXAMPLE"}
{"command":"str_replace","path":"/memories/a.md","old_str":"no","new_str":"two"}
{"command":"view","path":"/memories/a.md"}
`),
		stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			return map[string]string{"MEMTOOL_KEY": key.Text(), "MEMTOOL_POLICY": policy}[k]
		},
	}
	if code := runWithEnv(context.Background(), []string{"exec", "--store", store}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	for _, want := range []string{"File created successfully", "Limit exceeded (file size)", "an AWS access key ID on line 1", "tea, two sugar"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("answers lack %q:\n%s", want, out.String())
		}
	}
	disk, _ := os.ReadFile(filepath.Join(store, "a.md"))
	if bytes.Contains(disk, []byte("tea")) {
		t.Error("stored in the clear")
	}
	log, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(log), `"outcome":"refused"`) {
		t.Errorf("audit: %s", log)
	}
	t.Log(string(log))
	entries, _ := os.ReadDir(store)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Log(names)
}

// TestPolicyFileStrict: a policy file that encoding/json would read with a
// field lost or changed (a duplicate key, a second object, a key in the
// wrong case, null) is refused with an error naming the problem, and so is
// any unknown field or wrong type.
func TestPolicyFileStrict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ policy, want string }{
		{`{"encrypt":true,"encrypt":false}`, "encrypt: the key appears twice"},
		{`{"history":{"max_versions":5,"max_versions":50}}`, "history.max_versions: the key appears twice"},
		{`{"limits":{"max_files":1},"limits":{}}`, "limits: the key appears twice"},
		{`{"encrypt":true}{"encrypt":false}`, "more data after the first JSON object"},
		{`{"encrypt":true} x`, "more data after the first JSON object"},
		{`{"encrypt":true,"expiry":true,"histroy":{}}`, "histroy: unknown field (known: limits, secrets, audit, encrypt, expiry, history)"},
		{`{"Encrypt":true}`, `Encrypt: unknown field (keys are lower case: "encrypt")`},
		{`{"history":{"maxVersions":5}}`, "history.maxVersions: unknown field"},
		{`{"encrypt":"yes"}`, "encrypt: want true or false, got a string"},
		{`{"encrypt":1}`, "encrypt: want true or false, got the number 1"},
		{`{"encrypt":null}`, "encrypt: null is not a value here"},
		{`{"history":null}`, "history: null is not a value here"},
		{`{"history":true}`, "history: want a JSON object, got a boolean"},
		{`{"history":[]}`, "history: want a JSON object, got a list"},
		{`{"limits":{"max_file_size":1.5}}`, "limits.max_file_size: 1.5: want a whole number"},
		{`{"limits":{"max_file_size":-1}}`, "limits.max_file_size: -1: want a whole number"},
		{`{"limits":{"max_file_size":"1MB"}}`, "limits.max_file_size: want a whole number, got a string"},
		{`{"secrets":""}`, "secrets: empty string"},
		{`{"secrets":"ignore"}`, `secrets: "ignore": want "reject" or "redact"`},
		{`{"history":{"max_age":"a month"}}`, `history.max_age: "a month": want a duration`},
		{`[{"encrypt":true}]`, "the file: want a JSON object, got a list"},
		{``, "the file: empty"},
		{`{"encrypt":true`, "invalid JSON"},
	} {
		name := filepath.Join(dir, "policy.json")
		os.WriteFile(name, []byte(c.policy), 0o600)
		_, err := loadPolicy(name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("policy %s: %v, want an error containing %q", c.policy, err, c.want)
		}
	}
	for _, ok := range []string{
		`{}`,
		`{"encrypt":false}`,
		` {"limits":{"max_file_size":100,"max_files":0},"secrets":"redact","audit":"-","encrypt":true,"expiry":true,"history":{"max_versions":5,"max_age":"30d"}}` + "\n",
	} {
		name := filepath.Join(dir, "policy.json")
		os.WriteFile(name, []byte(ok), 0o600)
		if _, err := loadPolicy(name); err != nil {
			t.Errorf("policy %s: %v", ok, err)
		}
	}
}

// policyEnv writes the policy into a file and returns the environment
// that names it and gives the key.
func policyEnv(t *testing.T, policy string, key encrypt.Key) []string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(name, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"MEMTOOL_POLICY=" + name, "MEMTOOL_KEY=" + key.Text()}
}

// runOn runs memtool with the command and arguments args on the store at
// url (--store after the command's name), with extra environment variables.
func runOn(t *testing.T, env []string, url string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runMemtoolEnv(t, env, append([]string{args[0], "--store", url}, args[1:]...)...)
}

// storeHolds reports whether any file of the store's directory tree holds
// text, byte for byte: what a backup of the store would reveal.
func storeHolds(t *testing.T, root, text string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(text)) {
				found = true
			}
		}
		return nil
	})
	return found
}

// A recordBackend is a kind of store the policy record is tested on: new
// makes one and gives its URL and its path on disk.
type recordBackend struct {
	name string
	new  func(t *testing.T) (url, disk string)
}

// recordBackends are the stores the policy record is tested on: the
// directory, which hides the record from listings, and SQLite, which
// lists it; each with a path on disk to search for plaintext.
var recordBackends = []recordBackend{
	{"dir", func(t *testing.T) (string, string) { d := filepath.Join(t.TempDir(), "s"); return d, d }},
	{"sqlite", func(t *testing.T) (string, string) {
		d := t.TempDir()
		return "sqlite://" + filepath.Join(d, "m.db"), d
	}},
}

// onRecordBackends runs test as a subtest on each of recordBackends, with
// the key k1.
func onRecordBackends(t *testing.T, test func(t *testing.T, be recordBackend, key encrypt.Key)) {
	key, _ := encrypt.NewKey("k1")
	for _, be := range recordBackends {
		t.Run(be.name, func(t *testing.T) { test(t, be, key) })
	}
}

// TestPolicySticksToStore: a store opened once with encryption remembers
// it. Without the policy, with a policy that drops encryption (through a
// duplicate key or a second object, too) or with another policy, memtool
// refuses to open it (exit status 3, saying what is missing): no plaintext
// reaches the disk and no ciphertext reaches the model. With the policy it
// works as before.
func TestPolicySticksToStore(t *testing.T) {
	t.Parallel()
	onRecordBackends(t, func(t *testing.T, be recordBackend, key encrypt.Key) {
		store, disk := be.new(t)
		enc := policyEnv(t, `{"encrypt":true}`, key)
		if _, stderr, code := runMemtoolEnv(t, enc, "create", "--store", store, "--text", "the secret recipe", "/memories/a.md"); code != 0 {
			t.Fatalf("create with the policy: exit %d: %s", code, stderr)
		}
		for _, c := range []struct {
			name string
			env  []string
			want string
		}{
			{"no policy", nil, `it is encrypted, and the policy has no "encrypt": true`},
			{"keys but no policy", []string{"MEMTOOL_KEY=" + key.Text()}, `"encrypt": true`},
			{"duplicate key", policyEnv(t, `{"encrypt":true,"encrypt":false}`, key), "encrypt: the key appears twice"},
			{"second object", policyEnv(t, `{"encrypt":true}{"encrypt":false}`, key), "more data after the first JSON object"},
			{"history only", policyEnv(t, `{"history":{}}`, key), `it is encrypted`},
		} {
			for _, args := range [][]string{
				{"create", "--text", "CANARY-" + c.name, "/memories/canary.md"},
				{"view", "/memories/a.md"},
			} {
				stdout, stderr, code := runOn(t, c.env, store, args...)
				if code != exitStore || !strings.Contains(stderr, c.want) || stdout != "" {
					t.Errorf("%s, %s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, args[0], code, stdout, stderr, exitStore, c.want)
				}
			}
			if storeHolds(t, disk, "CANARY") {
				t.Fatalf("%s: the canary reached the disk in the clear", c.name)
			}
		}
		out, stderr, code := runMemtoolEnv(t, enc, "view", "--store", store, "/memories/a.md")
		if code != 0 || !strings.Contains(out, "the secret recipe") {
			t.Errorf("view with the policy: exit %d, %q, %q", code, out, stderr)
		}
		if storeHolds(t, disk, "secret recipe") {
			t.Error("the store holds the text in the clear")
		}
	})
}

// TestPolicyRecordHistoryExpiry: history and expiry stick too, and may be
// turned on for a store that holds files (recorded from then on);
// encryption may not, and the refusal says how to get an encrypted copy.
// Encryption may start on a store whose files are all gone.
func TestPolicyRecordHistoryExpiry(t *testing.T) {
	t.Parallel()
	onRecordBackends(t, func(t *testing.T, be recordBackend, key encrypt.Key) {
		store, _ := be.new(t)
		if _, stderr, code := runMemtoolEnv(t, nil, "create", "--store", store, "--text", "v1", "/memories/d/a.md"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		both := policyEnv(t, `{"history":{},"expiry":true}`, key)
		if _, stderr, code := runMemtoolEnv(t, both, "str_replace", "--store", store, "--old", "v1", "--new", "v2", "/memories/d/a.md"); code != 0 {
			t.Fatalf("history and expiry on a store with files: exit %d, %s", code, stderr)
		}
		if out, stderr, code := runMemtoolEnv(t, both, "history", "--store", store, "/memories/d/a.md"); code != 0 || !strings.HasPrefix(out, "1\t") {
			t.Errorf("history: exit %d, %q, %q", code, out, stderr)
		}
		for _, c := range []struct {
			env  []string
			args []string
			want string
		}{
			{nil, []string{"view", "/memories/d/a.md"}, `it keeps history, and the policy has no "history"`},
			{policyEnv(t, `{"history":{}}`, key), []string{"view", "/memories/d/a.md"}, `it records when files are used, for memtool gc, and the policy has no "expiry": true`},
			{policyEnv(t, `{"expiry":true}`, key), []string{"delete", "/memories/d/a.md"}, `it keeps history`},
			{nil, []string{"gc", "--unused-for", "30d"}, `no "expiry": true`},
			{policyEnv(t, `{"history":{},"expiry":true,"encrypt":true}`, key), []string{"view", "/memories/d/a.md"}, "it holds unencrypted files (such as /memories/d/a.md), and the policy has \"encrypt\": true; memtool does not encrypt a store in place: copy it into a new, encrypted store with memtool migrate --from STORE --to NEW --to-policy POLICY"},
		} {
			stdout, stderr, code := runOn(t, c.env, store, c.args...)
			if code != exitStore || !strings.Contains(stderr, c.want) || stdout != "" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, stderr, exitStore, c.want)
			}
		}
		// A store whose files are all gone (an empty directory is
		// left) may start encryption.
		empty, _ := be.new(t)
		if _, stderr, code := runMemtoolEnv(t, nil, "create", "--store", empty, "--text", "x", "/memories/d/gone.md"); code != 0 {
			t.Fatal(stderr)
		}
		if _, stderr, code := runMemtoolEnv(t, nil, "delete", "--store", empty, "/memories/d/gone.md"); code != 0 {
			t.Fatal(stderr)
		}
		enc := policyEnv(t, `{"encrypt":true}`, key)
		if _, stderr, code := runMemtoolEnv(t, enc, "create", "--store", empty, "--text", "now sealed", "/memories/d/b.md"); code != 0 {
			t.Fatalf("encrypt on a store with only an empty directory: exit %d, %s", code, stderr)
		}
		if _, stderr, code := runMemtoolEnv(t, nil, "view", "--store", empty, "/memories/d/b.md"); code != exitStore || !strings.Contains(stderr, "it is encrypted") {
			t.Errorf("after encryption started: exit %d, %s", code, stderr)
		}
	})
}

// TestPolicyRecordLegacyStore: a store encrypted before stores had a
// policy record (written through package encrypt directly) is refused
// without the policy, by a look at its first file, and gets its record at
// the first open with the policy.
func TestPolicyRecordLegacyStore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	key, _ := encrypt.NewKey("k1")
	writeSealed(t, dir, key, "a.md", "old secret")
	if _, stderr, code := runMemtoolEnv(t, nil, "create", "--store", dir, "--text", "CANARY", "/memories/b.md"); code != exitStore || !strings.Contains(stderr, "its files are encrypted (such as /memories/a.md)") {
		t.Errorf("no policy on an encrypted store without a record: exit %d, %s", code, stderr)
	}
	if storeHolds(t, dir, "CANARY") {
		t.Fatal("the canary reached the disk")
	}
	if out, stderr, code := runMemtoolEnv(t, policyEnv(t, `{"encrypt":true}`, key), "view", "--store", dir, "/memories/a.md"); code != 0 || !strings.Contains(out, "old secret") {
		t.Fatalf("with the policy: exit %d, %q, %q", code, out, stderr)
	}
	if rec := readDisk(t, filepath.Join(dir, recordName)); !strings.Contains(rec, `"encrypt":true`) {
		t.Errorf("record after the first open with the policy: %s", rec)
	}
}

// writeSealed writes the file name of the directory store in dir
// encrypted with key, through package encrypt alone: no policy record is
// written, as in a store from before records.
func writeSealed(t *testing.T, dir string, key encrypt.Key, name, text string) {
	t.Helper()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s, _ := encrypt.New(fs, []encrypt.Key{key}, nil)
	if err := s.WriteFile(context.Background(), name, []byte(text), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
}

// TestPolicyRecordPerTenant: each tenant's memory has its own record.
func TestPolicyRecordPerTenant(t *testing.T) {
	t.Parallel()
	onRecordBackends(t, func(t *testing.T, be recordBackend, key encrypt.Key) {
		store, disk := be.new(t)
		enc := policyEnv(t, `{"encrypt":true}`, key)
		if _, stderr, code := runMemtoolEnv(t, enc, "create", "--store", store, "--tenant", "sealed", "--text", "sealed text", "/memories/a.md"); code != 0 {
			t.Fatal(stderr)
		}
		if _, stderr, code := runMemtoolEnv(t, nil, "create", "--store", store, "--tenant", "open", "--text", "open text", "/memories/a.md"); code != 0 {
			t.Fatalf("a plain tenant beside an encrypted one: %s", stderr)
		}
		if _, stderr, code := runMemtoolEnv(t, nil, "view", "--store", store, "--tenant", "sealed", "/memories/a.md"); code != exitStore || !strings.Contains(stderr, "(tenant sealed): policy mismatch: it is encrypted") {
			t.Errorf("the encrypted tenant without the policy: exit %d, %s", code, stderr)
		}
		if storeHolds(t, disk, "sealed text") || !storeHolds(t, disk, "open text") {
			t.Error("the tenants' files are not stored as their policies say")
		}
	})
}

// TestOpenRawStore: the store that memtool rekey works on lists the
// versions of package history and the access index of expiry (which the
// file store hides) and not the plaintext policy record, so that after a
// rekey the old key opens nothing; and a store recorded as not encrypted
// is refused.
func TestOpenRawStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memories")
	oldKey, _ := encrypt.NewKey("old")
	env := policyEnv(t, `{"encrypt":true,"history":{},"expiry":true}`, oldKey)
	for _, args := range [][]string{
		{"create", "--text", "v1", "/memories/a.md"},
		{"str_replace", "--old", "v1", "--new", "v2", "/memories/a.md"},
	} {
		if _, stderr, code := runOn(t, env, dir, args...); code != 0 {
			t.Fatal(stderr)
		}
	}
	newKey, _ := encrypt.NewKey("new")
	cli := &cliEnv{stderr: io.Discard, getenv: func(string) string { return "" }}
	raw, closer, err := openRawStore(ctx, cli, &storeFlags{store: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := encrypt.New(raw, []encrypt.Key{newKey, oldKey}, nil)
	n, err := encrypt.Rekey(ctx, s)
	closer.Close()
	if err != nil || n < 4 { // a.md, one version and its path, the index
		t.Fatalf("rekey: %d files, %v", n, err)
	}
	newOnly := policyEnv(t, `{"encrypt":true,"history":{},"expiry":true}`, newKey)
	if out, stderr, code := runMemtoolEnv(t, newOnly, "diff", "--store", dir, "/memories/a.md"); code != 0 || !strings.Contains(out, "-v1") {
		t.Errorf("diff with the new key alone: exit %d, %q, %q", code, out, stderr)
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if _, stderr, code := runMemtoolEnv(t, policyEnv(t, `{"history":{}}`, oldKey), "create", "--store", plain, "--text", "x", "/memories/a.md"); code != 0 {
		t.Fatal(stderr)
	}
	if _, _, err := openRawStore(ctx, cli, &storeFlags{store: plain}); err == nil || !strings.Contains(err.Error(), "it is not encrypted") {
		t.Errorf("a store recorded as not encrypted: %v", err)
	}
}

// TestPolicyRecordLeavesProcessPolicies: limits, secret filtering and
// audit are each process's own: a store opened with them records nothing,
// and opens without them.
func TestPolicyRecordLeavesProcessPolicies(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	dir := filepath.Join(t.TempDir(), "s")
	env := policyEnv(t, `{"limits":{"max_file_size":1000},"secrets":"reject","audit":"`+filepath.Join(t.TempDir(), "audit.jsonl")+`"}`, key)
	if _, stderr, code := runOn(t, env, dir, "create", "--text", "x", "/memories/a.md"); code != 0 {
		t.Fatal(stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, recordName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a store opened with limits, secrets and audit has a policy record: %v", err)
	}
	if out, stderr, code := runOn(t, nil, dir, "view", "/memories/a.md"); code != 0 || !strings.Contains(out, "x") {
		t.Errorf("without them: exit %d, %q, %q", code, out, stderr)
	}
}

// TestPolicyRecordUnknown: a record this memtool cannot read (a newer
// version, an unknown field) refuses the open rather than being ignored.
// Data of a policy this memtool does not know, in a store that lists it
// (SQLite), does not stop a plain open, but stops encryption from
// starting, which must see every file.
func TestPolicyRecordUnknown(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	for record, want := range map[string]string{
		`{"version":2,"encrypt":false,"history":false,"expiry":false}`:              "its policy record is version 2; this memtool reads version 1",
		`{"version":1,"encrypt":false,"history":false,"expiry":false,"quota":true}`: "is not one this memtool reads (written by a newer memtool, or damaged): quota: unknown field",
	} {
		dir := filepath.Join(t.TempDir(), "s")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, recordName), []byte(record), 0o600)
		if _, stderr, code := runOn(t, nil, dir, "view", "/memories"); code != exitStore || !strings.Contains(stderr, want) {
			t.Errorf("record %s: exit %d, %q; want %q", record, code, stderr, want)
		}
	}

	db := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
	if _, stderr, code := runOn(t, nil, db, "create", "--text", "x", "/memories/a.md"); code != 0 {
		t.Fatal(stderr)
	}
	if err := openTestStore(t, db, "").Mkdir(context.Background(), ".memtool-future"); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runOn(t, nil, db, "view", "/memories/a.md"); code != 0 || !strings.Contains(out, "x") {
		t.Errorf("a plain open beside unknown policy data: exit %d, %q, %q", code, out, stderr)
	}
	if _, stderr, code := runOn(t, policyEnv(t, `{"encrypt":true}`, key), db, "view", "/memories/a.md"); code != exitStore || !strings.Contains(stderr, "the store holds .memtool-future, which this memtool does not know") {
		t.Errorf("encryption beside unknown policy data: exit %d, %q", code, stderr)
	}
}
