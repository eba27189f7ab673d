package encrypt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

func newKey(t testing.TB, id string) encrypt.Key {
	t.Helper()
	k, err := encrypt.NewKey(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func wrap(t testing.TB, inner memtool.Store, opts *encrypt.Options, keys ...encrypt.Key) memtool.Store {
	t.Helper()
	s, err := encrypt.New(inner, keys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openDir opens a file store on dir (its own directory on disk).
func openDir(t testing.TB, dir string) *filestore.Store {
	t.Helper()
	fs, err := filestore.Open(dir, nil)
	return storetest.Opened(t, fs, err)
}

func TestWrapper(t *testing.T) {
	key := newKey(t, "k1")
	storetest.RunWrapper(t, func(t *testing.T) memtool.Store { return openDir(t, filepath.Join(t.TempDir(), "m")) },
		func(t *testing.T, inner memtool.Store) memtool.Store { return wrap(t, inner, nil, key) }, nil)
}

// TestAtRest: what reaches the inner store is not the text, differs on
// every write, and is Overhead bytes longer; Stat and ReadDir report the
// plaintext size.
func TestAtRest(t *testing.T) {
	inner := memstore.New()
	s := wrap(t, inner, nil, newKey(t, "k1"))
	ctx := context.Background()
	text := []byte("the user's private notes, twice: the user's private notes")
	if err := s.WriteFile(ctx, "a", text, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	first, _ := inner.ReadFile(ctx, "a", 1<<20)
	if bytes.Contains(first, []byte("private")) || len(first) != len(text)+encrypt.Overhead || !bytes.HasPrefix(first, []byte("mte2")) {
		t.Errorf("stored %d bytes: %q", len(first), first)
	}
	if err := s.WriteFile(ctx, "a", text, memtool.Replace); err != nil {
		t.Fatal(err)
	}
	second, _ := inner.ReadFile(ctx, "a", 1<<20)
	if bytes.Equal(first, second) {
		t.Error("the same text encrypted twice gives the same bytes")
	}
	fi, err := s.Stat(ctx, "a")
	entries, _ := s.ReadDir(ctx, "")
	if err != nil || fi.Size != int64(len(text)) || len(entries) != 1 || entries[0].Size != int64(len(text)) {
		t.Errorf("Stat %+v %v, ReadDir %+v; want size %d", fi, err, entries, len(text))
	}
	got, err := s.ReadFile(ctx, "a", int64(len(text)))
	if err != nil || !bytes.Equal(got, text) {
		t.Errorf("ReadFile: %q, %v", got, err)
	}
	if _, err := s.ReadFile(ctx, "a", int64(len(text))-1); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("ReadFile over the limit: %v", err)
	}
}

// TestTampering changes the stored bytes on disk in every way the issue
// names and checks that nothing is returned and the model reads a clear
// message.
func TestTampering(t *testing.T) {
	ctx := context.Background()
	k1 := newKey(t, "k1")
	dir := filepath.Join(t.TempDir(), "memories")
	inner := openDir(t, dir)
	alice := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, k1)
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if err := alice.WriteFile(ctx, name, []byte("secret of "+name), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	disk := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	setDisk := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pristine := disk("a.md")
	authFailed := "Error: The file /memories/a.md cannot be opened: its integrity check failed (it was changed outside memtool, it comes from another tenant's store, or the key is wrong). Nothing was read."

	check := func(t *testing.T, s memtool.Store, want error, wantText string) {
		t.Helper()
		got, err := s.ReadFile(ctx, "a.md", 1<<20)
		var ee *encrypt.Error
		if got != nil || !errors.Is(err, want) || !errors.As(err, &ee) || ee.Path != "/memories/a.md" {
			t.Errorf("ReadFile: %q, %v; want nothing and %v", got, err, want)
		}
		mem := memtool.New(s, nil)
		r := storetest.Call(t, mem, map[string]any{"command": "view", "path": "/memories/a.md"})
		if !r.IsError || r.Text != wantText {
			t.Errorf("view:\n got %q\nwant %q", r.Text, wantText)
		}
		before := disk("a.md")
		r = storetest.Call(t, mem, map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "secret", "new_str": "x"})
		if !r.IsError || r.Text != wantText || !bytes.Equal(disk("a.md"), before) {
			t.Errorf("str_replace: %q (file changed: %v)", r.Text, !bytes.Equal(disk("a.md"), before))
		}
	}

	// A byte flipped in every part of the file: magic, key ID, salt, nonce,
	// ciphertext, tag.
	for _, at := range []int{0, 4, 20, 30, 52, 60, encrypt.Overhead - 16 + 3, len(pristine) - 1} {
		t.Run(fmt.Sprintf("flip byte %d", at), func(t *testing.T) {
			b := bytes.Clone(pristine)
			b[at] ^= 0x01
			setDisk("a.md", b)
			defer setDisk("a.md", pristine)
			switch {
			case at < 4:
				check(t, alice, encrypt.ErrNotEncrypted, "Error: The file /memories/a.md cannot be opened: it is not encrypted in memtool's format (written without encryption, or damaged). Nothing was read.")
			case at == 4:
				// "k1" becomes "j1": a key that is not configured.
				check(t, alice, encrypt.ErrUnknownKey, `Error: The file /memories/a.md cannot be opened: it was encrypted with key "j1", which is not configured. Nothing was read.`)
			default:
				check(t, alice, encrypt.ErrAuth, authFailed)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		setDisk("a.md", pristine[:len(pristine)-1])
		defer setDisk("a.md", pristine)
		check(t, alice, encrypt.ErrAuth, authFailed)
	})
	t.Run("plaintext", func(t *testing.T) {
		setDisk("a.md", []byte("written by someone else, without encryption, long enough to pass the size check of the header easily"))
		defer setDisk("a.md", pristine)
		check(t, alice, encrypt.ErrNotEncrypted, "Error: The file /memories/a.md cannot be opened: it is not encrypted in memtool's format (written without encryption, or damaged). Nothing was read.")
	})
	t.Run("another path's ciphertext opens", func(t *testing.T) {
		// Not hidden (doc.go): the path is not bound, so that a rename
		// can move the stored bytes as they are.
		setDisk("a.md", disk("b.md"))
		defer setDisk("a.md", pristine)
		if got, err := alice.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "secret of b.md" {
			t.Errorf("b.md's bytes at a.md: %q, %v", got, err)
		}
	})
	t.Run("another tenant's file", func(t *testing.T) {
		bob := wrap(t, inner, &encrypt.Options{Tenant: "bob"}, k1)
		check(t, bob, encrypt.ErrAuth, authFailed)
	})
	t.Run("wrong key with the same ID", func(t *testing.T) {
		check(t, wrap(t, inner, &encrypt.Options{Tenant: "alice"}, newKey(t, "k1")), encrypt.ErrAuth, authFailed)
	})
	t.Run("another key", func(t *testing.T) {
		check(t, wrap(t, inner, &encrypt.Options{Tenant: "alice"}, newKey(t, "k2")), encrypt.ErrUnknownKey,
			`Error: The file /memories/a.md cannot be opened: it was encrypted with key "k1", which is not configured. Nothing was read.`)
	})
	// After all that, the pristine file still opens.
	if got, err := alice.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "secret of a.md" {
		t.Errorf("pristine file: %q, %v", got, err)
	}
}

func TestRotation(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	old := wrap(t, inner, nil, k1)
	old.Mkdir(ctx, "d")
	for _, name := range []string{"a", "d/b"} {
		if err := old.WriteFile(ctx, name, []byte("text "+name), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	both := wrap(t, inner, nil, k2, k1)
	if got, err := both.ReadFile(ctx, "d/b", 100); err != nil || string(got) != "text d/b" {
		t.Fatalf("old file with both keys: %q, %v", got, err)
	}
	n, err := encrypt.Rekey(ctx, both)
	if err != nil || n != 2 {
		t.Fatalf("Rekey: %d, %v", n, err)
	}
	onlyNew := wrap(t, inner, nil, k2)
	for _, name := range []string{"a", "d/b"} {
		if got, err := onlyNew.ReadFile(ctx, name, 100); err != nil || string(got) != "text "+name {
			t.Errorf("%s after rekey with the new key only: %q, %v", name, got, err)
		}
	}
	// Rekey writes the current format, also over files of the old one.
	inner = memstore.New()
	seedMTE1(t, inner)
	keys, _ := encrypt.ParseKeys(mte1Key)
	old1 := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, append([]encrypt.Key{k2}, keys...)...)
	if n, err := encrypt.Rekey(ctx, old1); err != nil || n != len(mte1Files) {
		t.Fatalf("Rekey over mte1 files: %d, %v", n, err)
	}
	for name, want := range mte1Files {
		if magicOf(t, inner, name) != "mte2" {
			t.Errorf("%s after Rekey: not mte2", name)
		}
		if got, err := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, k2).ReadFile(ctx, name, 100); err != nil || string(got) != want {
			t.Errorf("%s after Rekey with the new key only: %q, %v", name, got, err)
		}
	}
	if _, err := old.ReadFile(ctx, "a", 100); !errors.Is(err, encrypt.ErrUnknownKey) {
		t.Errorf("old key after rekey: %v", err)
	}
}

// TestRekeyAlso: Rekey also walks the root entries it is told about,
// which the file store leaves out of its listing, and walks each entry
// once where the store lists them (memstore). A file not in the format is
// left as it is in those entries and stops Rekey elsewhere.
func TestRekeyAlso(t *testing.T) {
	ctx := context.Background()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	for name, inner := range map[string]memtool.Store{"memstore": memstore.New(), "filestore": openDir(t, filepath.Join(t.TempDir(), "m"))} {
		t.Run(name, func(t *testing.T) {
			old := wrap(t, inner, nil, k1)
			for _, d := range []string{".memtool-own", ".memtool-own/x", "d"} {
				if err := old.Mkdir(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"a", "d/b", ".memtool-own/x/1", ".memtool-own/x/2", ".memtool-file"} {
				if err := old.WriteFile(ctx, f, []byte("text of "+f), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			plain := []byte("kept in the clear before encryption was turned on")
			inner.WriteFile(ctx, ".memtool-own/x/plain", plain, memtool.CreateOnly)

			both := wrap(t, inner, nil, k2, k1)
			n, err := encrypt.Rekey(ctx, both, ".memtool-own", ".memtool-file", ".memtool-missing")
			if err != nil || n != 5 {
				t.Fatalf("Rekey: %d, %v; want 5", n, err)
			}
			onlyNew := wrap(t, inner, nil, k2)
			for _, f := range []string{"a", "d/b", ".memtool-own/x/1", ".memtool-own/x/2", ".memtool-file"} {
				if got, err := onlyNew.ReadFile(ctx, f, 100); err != nil || string(got) != "text of "+f {
					t.Errorf("%s with the new key only: %q, %v", f, got, err)
				}
			}
			if got, _ := inner.ReadFile(ctx, ".memtool-own/x/plain", 100); !bytes.Equal(got, plain) {
				t.Errorf("the plain file in an own entry: %q", got)
			}

			inner.WriteFile(ctx, "d/plain", plain, memtool.CreateOnly)
			if _, err := encrypt.Rekey(ctx, both, ".memtool-own"); !errors.Is(err, encrypt.ErrNotEncrypted) {
				t.Errorf("Rekey over a plain file below the root: %v, want ErrNotEncrypted", err)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	k1, k2 := newKey(t, "k1"), newKey(t, "")
	if len(k2.ID) != 9 || !strings.HasPrefix(k2.ID, "k") {
		t.Errorf("random ID %q", k2.ID)
	}
	keys, err := encrypt.ParseKeys("# keys\n" + k1.Text() + "\n  " + k2.Text() + " # old\n")
	if err != nil || len(keys) != 2 || keys[0] != k1 || keys[1] != k2 {
		t.Fatalf("ParseKeys: %v, %v", keys, err)
	}
	if keys, err := encrypt.ParseKeys(k1.Text() + "," + k2.Text()); err != nil || len(keys) != 2 {
		t.Errorf("comma-separated: %v", err)
	}
	zeros := "k0:" + base64.StdEncoding.EncodeToString(make([]byte, 32)) // no secret at all
	for _, bad := range []string{"", "# nothing", "k1", "k1:AAAA", zeros, "bad id:" + strings.Split(k1.Text(), ":")[1], "waytoolongkeyid_123:" + strings.Split(k1.Text(), ":")[1]} {
		if _, err := encrypt.ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
	if _, err := encrypt.New(memstore.New(), []encrypt.Key{k1, k1}, nil); err == nil {
		t.Error("a key given twice was accepted")
	}
	if _, err := encrypt.New(memstore.New(), nil, nil); err == nil {
		t.Error("no key was accepted")
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	os.WriteFile(file, []byte(k1.Text()+"\n"), 0o600)
	env := map[string]string{"MEMTOOL_KEY_FILE": file}
	getenv := func(k string) string { return env[k] }
	if keys, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil || keys[0] != k1 {
		t.Errorf("from the file: %v, %v", keys, err)
	}
	env["MEMTOOL_KEY"] = k2.Text()
	if keys, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil || keys[0] != k2 {
		t.Errorf("the variable wins: %v, %v", keys, err)
	}
	delete(env, "MEMTOOL_KEY")
	// The modes the package doc names: the owner's bits alone pass.
	for _, mode := range []os.FileMode{0o400, 0o700} {
		os.Chmod(file, mode)
		if _, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
			t.Errorf("a key file of mode %v: %v", mode, err)
		}
	}
	os.Chmod(file, 0o620)
	if _, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err == nil {
		t.Error("a key file its group may write was accepted")
	}
	os.Chmod(file, 0o644)
	if _, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a world-readable key file: %v", err)
	}
	if _, err := encrypt.LoadKeys(func(string) string { return "" }, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err == nil {
		t.Error("no keys at all was accepted")
	}
}

// TestBattery: the same answers with and without the wrapper.
func TestBattery(t *testing.T) {
	battery.SameAnswers(t, battery.Inputs(t), wrap(t, memstore.New(), &encrypt.Options{Tenant: "t"}, newKey(t, "k1")))
}

// ---- benchmarks ----

var text4K = bytes.Repeat([]byte("abcdefghijklmno\n"), 256)

// BenchmarkWriteRead4K: WriteFile then ReadFile of 4 KiB on memstore,
// without and with the wrapper: the difference is the cost of one seal and
// one open (target: under 20 µs per operation).
func BenchmarkWriteRead4K(b *testing.B) {
	for _, wrapped := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "encrypt"}[wrapped], func(b *testing.B) {
			var s memtool.Store = memstore.New()
			if wrapped {
				s = wrap(b, s, &encrypt.Options{Tenant: "t"}, newKey(b, "k1"))
			}
			ctx := context.Background()
			b.SetBytes(2 * int64(len(text4K)))
			for b.Loop() {
				if err := s.WriteFile(ctx, "a", text4K, memtool.Replace); err != nil {
					b.Fatal(err)
				}
				if _, err := s.ReadFile(ctx, "a", 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEdit: a str_replace in a 4 KiB file through Memory on memstore
// (one open and one seal), without and with the wrapper.
func BenchmarkEdit(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store { return memstore.New() }, text4K, "encrypt",
		func(b *testing.B, s memtool.Store) memtool.Store { return wrap(b, s, nil, newKey(b, "k1")) })
}
