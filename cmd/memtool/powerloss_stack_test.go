//go:build linux

package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/internal/hostfault"
)

// TestPowerLossStack is TestCrashStackExec with the machine's power lost
// instead of the process killed: a kill leaves what the process wrote in
// the kernel's cache, where the reopened store finds it whether or not
// it was ever fsynced, and a power loss does not. The store is on an
// ext4 that writes nothing to its image unless an fsync makes it
// (hostfault.PowerLoss), or on a file system that keeps even less (a
// name only once its directory is fsynced: hostfault.StrictFS); memtool
// exec runs each round's lines one at a time and is killed either as it
// waits for the next line, right after an answer, or a moment into the
// next one, and the disk is then taken as it is and mounted as after a
// reboot. On it, every acknowledged change must be there with its
// content and its versions, under every policy stacked, on a directory
// and on a SQLite file; and the store then goes on working on it, round
// after round. The audit log is kept elsewhere: its lines are not
// fsynced (audit's doc).
func TestPowerLossStack(t *testing.T) {
	t.Parallel()
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	for _, kind := range []string{"dir", "sqlite", "strict-dir", "strict-sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := powerLossOf(t, kind, 256<<20)
			url := filepath.Join(p.Dir, "store")
			if strings.HasSuffix(kind, "sqlite") {
				url = "sqlite://" + filepath.Join(p.Dir, "memory.db")
			}
			auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
			key, _ := encrypt.NewKey("k1")
			env := policyEnv(t, csPolicy(auditLog), key)
			n := rounds
			if kind == "strict-sqlite" {
				n = (rounds + 1) / 2 // SQLite's many small reads and writes are slow over FUSE
			}
			csRounds(t, url, auditLog, env, n, plExecRound, p.Crash)
		})
	}
}

// A powerLoss is a directory whose machine can lose its power, and the
// function that cuts it.
type powerLoss struct {
	Dir   string
	Crash func()
}

// powerLossOf is a powerLoss: an ext4 of size bytes (hostfault.PowerLoss),
// or for a kind whose name begins with "strict", a hostfault.StrictFS,
// which keeps a change of a name only once its directory was fsynced.
func powerLossOf(t *testing.T, kind string, size int64) powerLoss {
	if strings.HasPrefix(kind, "strict") {
		s := hostfault.NewStrictFS(t)
		return powerLoss{s.Dir, s.Crash}
	}
	p := hostfault.NewPowerLoss(t, size)
	return powerLoss{p.Dir, p.Crash}
}

// eachPowerLoss runs test in parallel subtests on an ext4 of size bytes
// whose power can be cut (hostfault.PowerLoss), and on a
// hostfault.StrictFS, which keeps less than ext4 does.
func eachPowerLoss(t *testing.T, size int64, test func(t *testing.T, p powerLoss)) {
	for _, kind := range []string{"ext4", "strict"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, powerLossOf(t, kind, size))
		})
	}
}

// plExecRound sends memtool exec a round's lines one at a time, each
// after the answer to the one before, and kills it after a random number
// of answers: at once, or a random moment (up to 3 ms) after sending the
// next line. It returns the paths of the refused secrets it sent.
func plExecRound(t *testing.T, url string, env []string, files []*csFile, rng *rand.Rand, round int) (refusedPaths []string) {
	t.Helper()
	lines, plan, refusedPaths := csPlan(files, rng, round)
	cmd := exec.Command(plainBinary(t), "exec", "--store", url)
	cmd.Env = childEnv(env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	killAt, midLine := 1+rng.IntN(len(lines)-1), rng.IntN(2) == 0
	for n := range killAt {
		if _, err := fmt.Fprintln(stdin, lines[n]); err != nil {
			t.Fatal(err)
		}
		if !sc.Scan() {
			t.Fatalf("memtool exec ended after %d answers: %v: %s", n, sc.Err(), stderr.String())
		}
		csJudgeLine(t, plan[n], n, sc.Text())
	}
	if midLine {
		fmt.Fprintln(stdin, lines[killAt])
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
	}
	t.Logf("round %d: killed after %d answers%s", round, killAt, map[bool]string{true: ", into the next line"}[midLine])
	return refusedPaths
}
