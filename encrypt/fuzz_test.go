package encrypt_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
)

// FuzzOpen stores arbitrary bytes where an encrypted file goes: damaged
// (truncated, flipped, spliced) sealed files, old-format files and bytes
// in no format. A read either gives the text of a file this test sealed,
// from exactly its stored bytes, or fails with an *Error of one of the
// three classes that names the virtual path and neither a host path nor
// the key; an edit of a file that does not open leaves its bytes as they
// were.
func FuzzOpen(f *testing.F) {
	ctx := context.Background()
	keys, err := encrypt.ParseKeys(mte1Key + "\nk1:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=")
	if err != nil {
		f.Fatal(err)
	}
	// Files of the current format (mte2, key k1, sealed once and kept in
	// testdata/mte2, since every seal differs) and of the old one (mte1,
	// key old, at their own paths), each with the text it must open to.
	sealed := map[string]string{}
	for name, text := range map[string]string{"empty": "", "x": "x", "notes": "the user's notes\n", "long": strings.Repeat("long line ", 300)} {
		b, err := os.ReadFile(filepath.Join("testdata", "mte2", name))
		if err != nil {
			f.Fatal(err)
		}
		sealed[string(b)] = text
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(append(b[:encrypt.Overhead-16:encrypt.Overhead-16], b...))
	}
	for name, text := range mte1Files {
		b, err := os.ReadFile(filepath.Join("testdata", "mte1", filepath.FromSlash(name)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if name == "c.md" {
			sealed[string(b)] = text // it opens at c.md, where the fuzz stores it
		}
	}
	f.Add([]byte("mte3 from a later memtool"))
	f.Add([]byte("plain text, written without encryption"))
	f.Fuzz(func(t *testing.T, data []byte) {
		inner := memstore.New()
		if err := inner.WriteFile(ctx, "c.md", data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		s := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, keys[1], keys[0])
		got, err := s.ReadFile(ctx, "c.md", 1<<20)
		if err == nil {
			if want, ok := sealed[string(data)]; !ok || string(got) != want {
				t.Fatalf("bytes %q opened to %q", data, got)
			}
			return
		}
		var ee *encrypt.Error
		if got != nil || !errors.As(err, &ee) || ee.Path != "/memories/c.md" ||
			!(errors.Is(err, encrypt.ErrAuth) || errors.Is(err, encrypt.ErrUnknownKey) || errors.Is(err, encrypt.ErrNotEncrypted)) {
			t.Fatalf("bytes %q: %q, %v", data, got, err)
		}
		for _, k := range keys {
			_, secret, _ := strings.Cut(k.Text(), ":")
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows a key: %v", err)
			}
		}
		if strings.ContainsAny(err.Error(), "\x00\n") {
			t.Fatalf("the error has a control byte: %q", err)
		}
		if err := s.Update(ctx, "c.md", 1<<20, func([]byte) ([]byte, error) { return []byte("edited"), nil }); err == nil {
			t.Fatalf("an edit of bytes that do not open succeeded")
		}
		after, err := inner.ReadFile(ctx, "c.md", 1<<20)
		if err != nil || !bytes.Equal(after, data) {
			t.Fatalf("a failed edit changed the stored bytes: %q, %v", after, err)
		}
	})
}
