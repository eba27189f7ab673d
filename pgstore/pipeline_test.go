package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestHeldBackStatementFails: a write's change, sent with its COMMIT, that
// the server refuses (here a trigger raises) fails the write with the
// server's error and changes nothing; the connection, the transaction and
// the tenant's lock are left clean, so the next writes of the tenant, on
// every connection of the pool, succeed.
func TestHeldBackStatementFails(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := openWith(t, url, pgstore.Options{MaxConns: 1})
	if err := s.WriteFile(ctx, "f", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	if _, err := admin.Exec(ctx, `
		CREATE FUNCTION memtool_test_refuse() RETURNS trigger AS $$
		BEGIN
			IF NEW.data = 'refused'::bytea THEN RAISE EXCEPTION 'memtool test: refused'; END IF;
			RETURN NEW;
		END $$ LANGUAGE plpgsql;
		CREATE TRIGGER memtool_test_refuse BEFORE INSERT OR UPDATE ON memtool_entries
			FOR EACH ROW EXECUTE FUNCTION memtool_test_refuse();`); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, "f", 100, func([]byte) ([]byte, error) { return []byte("refused"), nil })
	if err == nil || !strings.Contains(err.Error(), "memtool test: refused") {
		t.Fatalf("Update refused by the server: %v, want its error", err)
	}
	if strings.Contains(err.Error(), "may or may not") {
		t.Errorf("a refused change is reported as maybe made: %v", err)
	}
	if got, err := s.ReadFile(ctx, "f", 100); err != nil || string(got) != "old" {
		t.Errorf("after the refused Update: %q, %v; want it unchanged", got, err)
	}
	if err := s.WriteFile(ctx, "g", []byte("refused"), memtool.CreateOnly); err == nil {
		t.Error("a refused create succeeded")
	}
	if _, err := s.Stat(ctx, "g"); err == nil {
		t.Error("a refused create left its file")
	}
	// The one connection of the pool is clean: the tenant's next write
	// takes the lock and commits.
	if err := s.Update(ctx, "f", 100, func([]byte) ([]byte, error) { return []byte("new"), nil }); err != nil {
		t.Fatalf("the write after the refused ones: %v", err)
	}
	if got, err := s.ReadFile(ctx, "f", 100); err != nil || string(got) != "new" {
		t.Errorf("after the next Update: %q, %v", got, err)
	}
}
