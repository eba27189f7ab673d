package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	versions "github.com/memtool/memtool/history"
)

// histFile is the file the history races edit, delete and create.
const histFile = "/memories/h.txt"

var histMark = regexp.MustCompile(`<ins \d+\.\d+>|GEN \S+`)

// histState is a content of histFile: its generation (which create made
// it) and the inserts in it.
type histState struct {
	gen  string
	ins  []string
	from string // "current" or "version N (op)"
}

func parseHist(text, from string) histState {
	s := histState{from: from}
	for _, m := range histMark.FindAllString(text, -1) {
		if strings.HasPrefix(m, "GEN ") {
			s.gen = m
		} else {
			s.ins = append(s.ins, m)
		}
	}
	slices.Sort(s.ins)
	return s
}

// TestHistoryRacesOnSharedBackends races 6 processes inserting lines into
// one file against 2 deleting it and creating it anew, each a memtool exec
// process with the history policy (alone, and under all policies), on
// PostgreSQL, on S3 (no atomic rename: tombstones) and on a directory.
// Every acknowledged insert must be in the current file or in a kept
// version; and history must hold every content that a change replaced:
// the versions and the current file of each generation (a create's)
// form a chain of inserts, one more at each step, from none to the
// generation's last content, which a delete kept unless it is current.
func TestHistoryRacesOnSharedBackends(t *testing.T) {
	t.Parallel()
	policies := map[string]string{
		"history": `{"history":{"max_versions":1000}}`,
		"all":     `{"encrypt":true,"history":{"max_versions":1000},"expiry":true,"limits":{"max_file_size":65536,"max_files":1000},"secrets":"redact","audit":%q}`,
	}
	raceOnSharedBackends(t, policies, historyRace)
}

func historyRace(t *testing.T, url string, env []string) {
	const inserters, deleters, inserts, cycles, pause = 6, 2, 30, 5, 4
	st := openVia(t, url, env)
	p := newRacePool(t, st.top, url, env, inserters+deleters)
	defer p.stop()
	p.one(jsonLine(createInput(histFile, "GEN 0\nEND")))
	lines := make([][]string, inserters+deleters)
	for w := range inserters {
		for j := range inserts {
			lines[w] = append(lines[w], jsonLine(map[string]any{"command": "insert", "path": histFile, "insert_line": 1, "insert_text": fmt.Sprintf("<ins %d.%d>\n", w, j)}))
		}
	}
	for d := range deleters {
		for g := range cycles {
			lines[inserters+d] = append(lines[inserters+d],
				jsonLine(map[string]any{"command": "delete", "path": histFile}),
				jsonLine(createInput(histFile, fmt.Sprintf("GEN %d.%d\nEND", d, g))))
			for range pause { // let the inserters find the file
				lines[inserters+d] = append(lines[inserters+d], jsonLine(map[string]any{"command": "view", "path": "/memories"}))
			}
		}
	}
	answers := p.ask(lines)
	acked := map[string]bool{} // insert marker → acknowledged
	created := map[string]bool{"GEN 0": true}
	deletes := 0
	for w, as := range answers {
		for j, a := range as {
			switch {
			case w < inserters:
				acked[fmt.Sprintf("<ins %d.%d>", w, j)] = !a.IsError
				if a.IsError && !strings.Contains(a.Text(), "does not exist") && !busyRefusal(a.Text()) {
					t.Errorf("insert %d.%d: %s", w, j, a.Text())
				}
			case j%(2+pause) >= 2:
			case j%(2+pause) == 0:
				if !a.IsError {
					deletes++
				} else if !strings.Contains(a.Text(), "does not exist") && !busyRefusal(a.Text()) {
					t.Errorf("deleter %d, delete %d: %s", w-inserters, j/(2+pause), a.Text())
				}
			default:
				if !a.IsError {
					created[fmt.Sprintf("GEN %d.%d", w-inserters, j/(2+pause))] = true
				} else if !strings.Contains(a.Text(), "already exists") && !busyRefusal(a.Text()) {
					t.Errorf("deleter %d, create %d: %s", w-inserters, j/(2+pause), a.Text())
				}
			}
		}
	}
	checkHistory(t, st, acked, created, deletes)
}

// busyRefusal reports whether an answer is the store's refusal under
// contention (a lock not had in time, on a loaded machine), which changed
// nothing and is no lost update: the racers are not told it was done.
func busyRefusal(text string) bool {
	return strings.Contains(text, "store is busy") && strings.Contains(text, "changed nothing")
}

// checkHistory reads the versions and current content of histFile and
// checks them against what the racers were told (see
// TestHistoryRacesOnSharedBackends).
func checkHistory(t *testing.T, st *policyStack, acked, created map[string]bool, deletes int) {
	t.Helper()
	ctx := context.Background()
	st.settleHistory(ctx)
	var states []histState
	text, ok := (&racePool{t: t, store: st.top}).read(histFile)
	cur := ""
	if ok {
		s := parseHist(text, "current")
		cur = s.gen
		states = append(states, s)
	}
	vs, err := versions.Versions(ctx, st.belowHistory, histFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		data, err := versions.Read(ctx, st.belowHistory, histFile, v.N)
		if err != nil {
			t.Fatalf("version %d: %v", v.N, err)
		}
		states = append(states, parseHist(string(data), fmt.Sprintf("version %d (%s)", v.N, v.Op)))
	}
	byGen := map[string][]histState{}
	for _, s := range states {
		if !created[s.gen] {
			t.Errorf("%s is of generation %q, which no acknowledged create made", s.from, s.gen)
		}
		for _, m := range s.ins {
			if !acked[m] {
				t.Errorf("%s holds %s, which was not acknowledged", s.from, m)
			}
		}
		byGen[s.gen] = append(byGen[s.gen], s)
	}
	seen := map[string]string{} // acknowledged insert → its generation
	gone := 0
	for gen := range created {
		ss := byGen[gen]
		if len(ss) == 0 {
			t.Errorf("generation %q was created, but neither current nor kept", gen)
			continue
		}
		if gen != cur {
			gone++
		}
		slices.SortStableFunc(ss, func(a, b histState) int { return len(a.ins) - len(b.ins) })
		top := ss[len(ss)-1]
		for _, m := range top.ins {
			if g, ok := seen[m]; ok {
				t.Errorf("%s is in generations %q and %q", m, g, gen)
			}
			seen[m] = gen
		}
		// A chain: sizes 0..len(top.ins), each a subset of the next.
		size := 0
		for i, s := range ss {
			if i > 0 && !isSubset(ss[i-1].ins, s.ins) {
				t.Errorf("generation %q: %s %q is no subset of %s %q", gen, ss[i-1].from, ss[i-1].ins, s.from, s.ins)
			}
			if len(s.ins) > size+1 {
				t.Errorf("generation %q: no content with %d inserts kept (next: %s with %d); a replaced content is missing", gen, size+1, s.from, len(s.ins))
			}
			size = len(s.ins)
		}
		if len(ss[0].ins) != 0 {
			t.Errorf("generation %q: its created content is not kept", gen)
		}
	}
	for m, ok := range acked {
		if _, in := seen[m]; ok && !in {
			t.Errorf("acknowledged %s is neither in the file nor in any kept version", m)
		}
	}
	if gone != deletes {
		t.Errorf("%d generations are gone from the file, and %d deletes were acknowledged", gone, deletes)
	}
	t.Logf("%d versions, %d generations, %d deletes, %d acknowledged inserts", len(vs), len(created), deletes, len(seen))
}

func isSubset(a, b []string) bool {
	for _, m := range a {
		if _, ok := slices.BinarySearch(b, m); !ok {
			return false
		}
	}
	return true
}
