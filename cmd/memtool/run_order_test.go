package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// memtool run keeps the order of one turn's calls on one file, every time,
// and prints each call on stderr in the order it ran: a few runs of the
// binary, as a user runs it; the 200 runs in this process are
// TestRunKeepsOrderInProcess, in a build with -tags claude.
func TestRunKeepsOrderInTurn(t *testing.T) {
	t.Parallel()
	checkRunOrder(t, 3, func(srv *claudetest.Server, dir string) (string, int) {
		_, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", dir, "take notes")
		return errOut, code
	})
}

// checkRunOrder runs memtool run runs times, a few at a time, on
// a turn of three calls on one file, each with runOnce.
func checkRunOrder(t *testing.T, runs int, runOnce func(srv *claudetest.Server, dir string) (stderr string, code int)) {
	turn := claudetest.Turn{Calls: []claudetest.ToolUse{
		{Input: `{"command":"create","path":"/memories/x.md","file_text":"alpha\nbeta\n"}`},
		{Input: `{"command":"str_replace","path":"/memories/x.md","old_str":"beta","new_str":"BETA"}`},
		{Input: `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"between"}`},
	}}
	wantLog := "memory: create /memories/x.md: ok\nmemory: str_replace /memories/x.md: ok\nmemory: insert /memories/x.md: ok\n"
	var mu sync.Mutex
	inOrder, printed := 0, 0
	var firstBad string
	sem := make(chan struct{}, 4) // a few children at a time
	var wg sync.WaitGroup
	for range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			srv := claudetest.NewServer(turn, claudetest.Turn{Text: "Saved."})
			defer srv.Close()
			dir := t.TempDir()
			errOut, code := runOnce(srv, dir)
			data, err := os.ReadFile(filepath.Join(dir, "x.md"))
			mu.Lock()
			defer mu.Unlock()
			if code == 0 && err == nil && string(data) == "alpha\nbetween\nBETA\n" {
				inOrder++
			} else if firstBad == "" {
				firstBad = fmt.Sprintf("exit %d, x.md %q\n%s", code, data, errOut)
			}
			if strings.Contains(errOut, wantLog) {
				printed++
			}
		})
	}
	wg.Wait()
	if inOrder != runs || printed != runs {
		t.Errorf("of %d runs: %d ran the turn in order, %d printed the calls in order; first failure:\n%s", runs, inOrder, printed, firstBad)
	}
}
