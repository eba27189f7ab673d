package encrypt_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
)

// TestReadLimits: a limit is on the text, whatever the stored bytes add:
// a file exactly at the limit is read, one byte over is not, an empty
// file reads with limit 0, and a limit too large to add Overhead to
// (math.MaxInt64 means no limit) reads every file, on every local store.
func TestReadLimits(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := wrap(t, inner, nil, newKey(t, "k1"))
		texts := map[string]string{"empty": "", "ten": "0123456789"}
		for name, text := range texts {
			if err := s.WriteFile(ctx, name, []byte(text), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
		same := func(old []byte) ([]byte, error) { return old, nil }
		for _, c := range []struct {
			name  string
			limit int64
			ok    bool
		}{
			{"empty", 0, true},
			{"ten", 10, true},
			{"ten", 9, false},
			{"ten", 0, false},
			{"ten", 1 << 62, true},
			{"ten", math.MaxInt64 - int64(80), true},
			{"ten", math.MaxInt64, true},
		} {
			got, err := s.ReadFile(ctx, c.name, c.limit)
			uerr := s.Update(ctx, c.name, c.limit, same)
			switch {
			case c.ok && (err != nil || string(got) != texts[c.name] || uerr != nil):
				t.Errorf("%s, limit %d: ReadFile %q, %v; Update %v", c.name, c.limit, got, err, uerr)
			case !c.ok && (!errors.Is(err, memtool.ErrTooLarge) || got != nil || !errors.Is(uerr, memtool.ErrTooLarge)):
				t.Errorf("%s, limit %d: ReadFile %q, %v; Update %v; want ErrTooLarge", c.name, c.limit, got, err, uerr)
			}
		}
	})
}
