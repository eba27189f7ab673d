package mcpserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
)

// TestResourcesListUnderChanges: while other calls create, delete and
// rename files around them, paging through resources/list on a real
// directory store gives every file that stays all along exactly once, in
// strictly increasing name order, and no page fails.
func TestResourcesListUnderChanges(t *testing.T) {
	ctx := context.Background()
	mem := memtool.New(backendtest.FileStore(t), nil)
	stable := map[string]bool{}
	for i := range 250 {
		p := fmt.Sprintf("/memories/s%d/f%03d.txt", i%7, i)
		if r := mem.Run(ctx, fmt.Appendf(nil, `{"command":"create","path":%q,"file_text":"x"}`, p)); r.IsError {
			t.Fatal(r.Text)
		}
		stable[p] = true
	}
	cs := connect(t, mem, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := fmt.Sprintf("/memories/s%d/churn%d-%d.txt", i%7, w, i)
				b := fmt.Sprintf("/memories/churn%d/moved%d.txt", w, i)
				mem.Run(ctx, fmt.Appendf(nil, `{"command":"create","path":%q,"file_text":"x"}`, a))
				mem.Run(ctx, fmt.Appendf(nil, `{"command":"rename","old_path":%q,"new_path":%q}`, a, b))
				mem.Run(ctx, fmt.Appendf(nil, `{"command":"delete","path":"/memories/churn%d"}`, w))
			}
		}()
	}
	for range 5 {
		seen := map[string]int{}
		last := ""
		params := &mcp.ListResourcesParams{}
		for {
			res, err := cs.ListResources(ctx, params)
			if err != nil {
				t.Fatalf("resources/list under changes: %v", err)
			}
			for _, r := range res.Resources {
				if r.Name <= last {
					t.Errorf("%s listed after %s", r.Name, last)
				}
				last = r.Name
				seen[r.Name]++
			}
			if res.NextCursor == "" {
				break
			}
			params.Cursor = res.NextCursor
		}
		for p := range stable {
			if seen[p] != 1 {
				t.Errorf("%s listed %d times", p, seen[p])
			}
		}
	}
	close(stop)
	wg.Wait()
}
