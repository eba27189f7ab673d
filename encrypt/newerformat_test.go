package encrypt_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
)

// A file in a later format of this package (a magic "mte3" or above,
// written by a newer memtool) is refused, nothing read, and the refusal
// says so, not that the file was written without encryption, which would
// send its owner looking for the wrong cause.
func TestNewerFormatRefusedAsSuch(t *testing.T) {
	ctx := context.Background()
	k, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	raw := memstore.New()
	s, err := encrypt.New(raw, []encrypt.Key{k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := append([]byte("mte3k1"), bytes.Repeat([]byte{0}, 2*encrypt.Overhead)...)
	if err := raw.WriteFile(ctx, "a.md", data, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadFile(ctx, "a.md", 1<<20)
	const want = "The file /memories/a.md cannot be opened: it is encrypted in a format this memtool does not read (mte3: written by a newer memtool, or damaged). Nothing was read."
	if got != nil || !errors.Is(err, encrypt.ErrNotEncrypted) || err.Error() != want {
		t.Errorf("read of an mte3 file: %q, %v\nwant the error %q", got, err, want)
	}
}
