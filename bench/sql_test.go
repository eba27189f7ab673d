package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// BenchmarkPostgresStrReplace times str_replace through memtool.Memory on
// pgstore against the least a durable edit of one row can cost: a bare
// read-modify-write transaction (BEGIN; SELECT ... FOR UPDATE; UPDATE;
// COMMIT) on a connection of its own, on a row of the same table. The two
// alternate in one loop, so that the load of the machine weighs on both
// alike; it reports each one's mean and their ratio (store/bare). See
// bench/sql.md.
func BenchmarkPostgresStrReplace(b *testing.B) {
	ctx := context.Background()
	url := pgtest.URL(b)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	mem := memtool.New(s, nil)
	text := `"line one\nstate A\nline three\n"`
	if res := mem.Run(ctx, []byte(`{"command":"create","path":"/memories/note.md","file_text":`+text+`}`)); res.IsError {
		b.Fatal(res.Text)
	}
	edits := [2][]byte{
		[]byte(`{"command":"str_replace","path":"/memories/note.md","old_str":"state A","new_str":"state B"}`),
		[]byte(`{"command":"str_replace","path":"/memories/note.md","old_str":"state B","new_str":"state A"}`),
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES ('bare', '', 'note.md', false, 0, '')`); err != nil {
		b.Fatal(err)
	}
	bare := func() {
		tx, err := conn.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var data []byte
		if err := tx.QueryRow(ctx, `SELECT data FROM memtool_entries WHERE tenant = 'bare' AND parent = '' AND name = 'note.md' FOR UPDATE`).Scan(&data); err != nil {
			b.Fatal(err)
		}
		data = append(data[:0], "line one\nstate B\nline three\n"...)
		if _, err := tx.Exec(ctx, `UPDATE memtool_entries SET size = $1, data = $2 WHERE tenant = 'bare' AND parent = '' AND name = 'note.md'`, len(data), data); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// Warm both up: connections made, statements prepared.
	for i := range 4 {
		if res := mem.Run(ctx, edits[i%2]); res.IsError {
			b.Fatal(res.Text)
		}
		bare()
	}
	var store, base time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		if res := mem.Run(ctx, edits[i%2]); res.IsError {
			b.Fatal(res.Text)
		}
		t1 := time.Now()
		bare()
		store += t1.Sub(t0)
		base += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(store.Microseconds())/n, "store-µs/op")
	b.ReportMetric(float64(base.Microseconds())/n, "bare-µs/op")
	b.ReportMetric(float64(store)/float64(base), "store/bare")
}
