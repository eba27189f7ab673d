package encrypt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
)

// TestNewRefusesKeyWithoutSecret: a Key made as a literal has an ID and
// no secret (32 zero bytes, which anyone can use to open the files).
// ParseKeys refuses such a key; New must too, rather than store every
// memory sealed under a key that keeps nothing secret.
func TestNewRefusesKeyWithoutSecret(t *testing.T) {
	ctx := context.Background()
	for _, keys := range [][]encrypt.Key{
		{{ID: "k1"}},
		{newKey(t, "k1"), {ID: "k0"}},
	} {
		inner := memstore.New()
		s, err := encrypt.New(inner, keys, nil)
		if err == nil {
			err = s.WriteFile(ctx, "a.md", []byte("the user's notes"), memtool.CreateOnly)
			t.Errorf("New with a key of 32 zero bytes (%s first) accepted it; WriteFile: %v", keys[0].ID, err)
		}
		if _, err := inner.Stat(ctx, "a.md"); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("a file was stored: %v", err)
		}
	}
}
