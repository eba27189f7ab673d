package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
)

// benchMemory is a memtool.Memory on a new SQLite file in $TMPDIR,
// closed when b ends.
func benchMemory(b *testing.B) *memtool.Memory {
	st, err := sqlitestore.Open(filepath.Join(b.TempDir(), "m.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return memtool.New(st, nil)
}

// BenchmarkMixedCommands runs commands of the memory tool through
// memtool.Memory on one SQLite file, in turns: a str_replace (back and
// forth), a view of the file, a view of its directory and an insert (each
// file is created again every 64 rounds, so that it stays small), over 20
// files. Every answer is checked. Run it with TMPDIR on a tmpfs to see the
// CPU a command costs without the disk's fsyncs:
//
//	TMPDIR=/dev/shm go test -run '^$' -bench MixedCommands -benchtime 20000x ./sqlitestore
func BenchmarkMixedCommands(b *testing.B) {
	m := benchMemory(b)
	ctx := context.Background()
	const files = 20
	run := func(input string, want string) {
		r := m.Run(ctx, []byte(input))
		if r.IsError || !strings.Contains(r.Text, want) {
			b.Fatalf("%s: %q, want it to hold %q", input, r.Text, want)
		}
	}
	create := func(f int) {
		run(fmt.Sprintf(`{"command":"create","path":"/memories/d/f%d.md","file_text":"line one\nline two A\nline three\n"}`, f), "created")
	}
	for f := range files {
		create(f)
	}
	state := make([]byte, files) // the letter after "two" in each file
	for f := range state {
		state[f] = 'A'
	}
	b.ResetTimer()
	for i := range b.N {
		f := i / 4 % files
		switch i % 4 {
		case 0:
			next := 'A' + 'B' - state[f]
			run(fmt.Sprintf(`{"command":"str_replace","path":"/memories/d/f%d.md","old_str":"two %c","new_str":"two %c"}`, f, state[f], next), "has been edited")
			state[f] = next
		case 1:
			run(fmt.Sprintf(`{"command":"view","path":"/memories/d/f%d.md"}`, f), "line three")
		case 2:
			run(`{"command":"view","path":"/memories/d"}`, fmt.Sprintf("f%d.md", f))
		case 3:
			run(fmt.Sprintf(`{"command":"insert","path":"/memories/d/f%d.md","insert_line":1,"insert_text":"more"}`, f), "has been edited")
			if i/4/files%64 == 63 {
				b.StopTimer()
				run(fmt.Sprintf(`{"command":"delete","path":"/memories/d/f%d.md"}`, f), "deleted")
				create(f)
				state[f] = 'A'
				b.StartTimer()
			}
		}
	}
}

// BenchmarkConcurrentClients runs the commands of BenchmarkMixedCommands'
// kinds from 64 goroutines at once (as a server's clients), each on a file
// of its own: three views for an insert, every answer checked.
func BenchmarkConcurrentClients(b *testing.B) {
	m := benchMemory(b)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 CPUs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := next.Add(1)
		file := fmt.Sprintf("/memories/c%d/a.md", c)
		if r := m.Run(ctx, []byte(fmt.Sprintf(`{"command":"create","path":%q,"file_text":"one\ntwo\n"}`, file))); r.IsError {
			b.Error(r.Text)
			return
		}
		for i := 0; pb.Next(); i++ {
			var r memtool.Result
			switch i % 4 {
			case 0:
				r = m.Run(ctx, []byte(fmt.Sprintf(`{"command":"insert","path":%q,"insert_line":0,"insert_text":"x"}`, file)))
			case 1, 2:
				r = m.Run(ctx, []byte(fmt.Sprintf(`{"command":"view","path":%q,"view_range":[1,3]}`, file)))
			case 3:
				r = m.Run(ctx, []byte(fmt.Sprintf(`{"command":"view","path":"/memories/c%d"}`, c)))
			}
			if r.IsError {
				b.Error(r.Text)
				return
			}
		}
	})
}
