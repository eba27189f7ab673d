package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ownInitBudget is the most a memtool package may allocate while it is
// initialised. Package initialisation runs in every process that links
// the package, whatever the command: a pattern to compile or a table to
// build belongs behind a sync.Once (or in the function that needs it).
// The largest today are the root package's parser tables and two
// patterns of claude/mcptools, under 4 KB each.
const ownInitBudget = 8 << 10

// TestOwnPackagesInitCheaply: memtool's own packages do no costly work at
// initialisation. It reads GODEBUG=inittrace=1 of this test binary, which
// links every package memtool does, started to run no test. (This
// package itself is left out: in the test binary its init is that of the
// tests' variables too.)
func TestOwnPackagesInitCheaply(t *testing.T) {
	initLine := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	godebug := "inittrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], "github.com/memtool/memtool") || m[1] == "github.com/memtool/memtool/cmd/memtool" {
			continue
		}
		seen++
		if bytes, _ := strconv.Atoi(m[2]); bytes > ownInitBudget {
			t.Errorf("%s allocates %d bytes (%s allocs) at initialisation; budget %d", m[1], bytes, m[3], ownInitBudget)
		}
	}
	// The trace names the packages: at least the root, storeurl and
	// filestore have an init to trace.
	if seen < 3 {
		t.Fatalf("inittrace named %d memtool packages; output:\n%s", seen, out)
	}
}
