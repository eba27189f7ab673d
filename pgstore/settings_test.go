package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestSessionSettings checks that the store's sessions carry its timeouts,
// so that the server ends what the store gave up on: a lock wait, a
// statement, and a transaction left idle by a client that stopped
// answering.
func TestSessionSettings(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), &Options{OpTimeout: 7 * time.Second, LockTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for setting, want := range map[string]string{
		"lock_timeout":                        "3s",
		"statement_timeout":                   "7s",
		"idle_in_transaction_session_timeout": "7s",
	} {
		var got string
		if err := s.db.pool.QueryRow(ctx, "SHOW "+setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}

// The pool holds DefaultMaxConns connections unless the URL's
// pool_max_conns or Options.MaxConns says otherwise; the word inside a
// password is no such setting.
func TestPoolSize(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		url  string
		opts *Options
		want int32
	}{
		{base, nil, DefaultMaxConns},
		{base + sep + "pool_max_conns=3", nil, 3},
		{base + sep + "pool_max_conns=3", &Options{MaxConns: 5}, 5},
	} {
		s, err := Open(ctx, c.url, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.db.pool.Config().MaxConns; got != c.want {
			t.Errorf("Open(…%s, %+v): a pool of %d, want %d", strings.TrimPrefix(c.url, base), c.opts, got, c.want)
		}
		s.Close()
	}
	for conn, want := range map[string]bool{
		"postgres://u@h/db?pool_max_conns=3":                 true,
		"postgres://u:pool_max_conns@h/db":                   false,
		"postgresql://u@h/db?search_path=s&pool_max_conns=2": true,
		"host=h user=u pool_max_conns=4":                     true,
		"host=h user=u password=xpool_max_conns=4":           false,
		"host=h dbname=db":                                   false,
		"host=h user=u pool_max_conns = 4":                   true,
		"host=h user=u password='a pool_max_conns=4'":        false,
	} {
		if got := namesMaxConns(conn); got != want {
			t.Errorf("namesMaxConns(%q) = %v, want %v", conn, got, want)
		}
	}
}
