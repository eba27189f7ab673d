package history_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// A usage counter that cannot be read at all, not merely one that does
// not parse, is counted again and replaced: the bound must not stop for
// good, with only OnError hearing of it, while the versions grow. Before,
// a counter larger than the 1 KiB read of it (damaged), or one that the
// encrypting store below cannot open (damaged bytes, or sealed under a
// key the process no longer has), made every change's bound check fail,
// and the versions grew past MaxBytes without end.
func TestMaxBytesUnreadableCounter(t *testing.T) {
	k1, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := encrypt.NewKey("k2")
	if err != nil {
		t.Fatal(err)
	}
	const counter = history.DirName + "/usage/counter"
	for _, tc := range []struct {
		name string
		keys []encrypt.Key // nil: no encryption
		// damage makes the counter unreadable in raw, the store below
		// any encryption.
		damage func(t *testing.T, raw memtool.Store)
	}{
		{"larger than its read", nil, func(t *testing.T, raw memtool.Store) {
			if err := raw.WriteFile(context.Background(), counter, []byte(strings.Repeat("9", 2000)), memtool.Replace); err != nil {
				t.Fatal(err)
			}
		}},
		{"encrypted, damaged bytes", []encrypt.Key{k1}, func(t *testing.T, raw memtool.Store) {
			if err := raw.WriteFile(context.Background(), counter, []byte("garbage"), memtool.Replace); err != nil {
				t.Fatal(err)
			}
		}},
		{"encrypted under a key no longer held", []encrypt.Key{k1}, func(t *testing.T, raw memtool.Store) {
			old, err := encrypt.New(raw, []encrypt.Key{k2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := old.WriteFile(context.Background(), counter, []byte("1 0"), memtool.Replace); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.OnLocal(t, func(t *testing.T, raw memtool.Store) {
				ctx := context.Background()
				below := raw
				if tc.keys != nil {
					var err error
					if below, err = encrypt.New(raw, tc.keys, nil); err != nil {
						t.Fatal(err)
					}
				}
				var reported []error
				s := history.New(below, &history.Options{MaxBytes: 1000, OnError: func(err error) { reported = append(reported, err) }})
				if err := s.WriteFile(ctx, "n.md", []byte("n"), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
				if err := s.WriteFile(ctx, "n.md", []byte("m"), memtool.Replace); err != nil {
					t.Fatal(err)
				}
				tc.damage(t, raw)
				for i := range 20 {
					name := fmt.Sprintf("f%d.md", i)
					if err := s.WriteFile(ctx, name, []byte(strings.Repeat("x", 300)), memtool.CreateOnly); err != nil {
						t.Fatal(err)
					}
					if err := s.Remove(ctx, name); err != nil {
						t.Fatal(err)
					}
				}
				if total := versionTotal(t, below); total > 1000 {
					t.Errorf("with the counter unreadable, the versions hold %d bytes, over MaxBytes 1000 (OnError heard %d failures, the last: %v)", total, len(reported), last(reported))
				}
			})
		})
	}
}

func last(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[len(errs)-1]
}
