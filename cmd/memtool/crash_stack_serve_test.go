package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// TestCrashStackServe is TestCrashStackExec through `memtool serve`: several
// clients POST /v1/memory, one command or a turn of two at a time each on
// files of their own, while the server (two of them on PostgreSQL, one of
// which is killed) is killed with SIGKILL; an HTTP 200 answer is an
// acknowledgement.
func TestCrashStackServe(t *testing.T) {
	t.Parallel()
	csServe(t, false)
}

// TestCrashStackServeHistoryListed is TestCrashStackServe, where history
// must list, right after the kill, a version of every content a change
// replaced (README: "a delete moves the file into its version slot"):
// memtool history finishes a delete the kill cut off between moving the
// file into history's trash and numbering its version.
func TestCrashStackServeHistoryListed(t *testing.T) {
	t.Parallel()
	csServe(t, true)
}

// csServe runs TestCrashStackServe; listed: see csCheck.
func csServe(t *testing.T, listed bool) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			url, auditLog, env := csStore(t, be)
			token := addKey(t, url, "alice", "write")
			servers := 1
			if be.Name == "postgres" {
				servers = 2
			}
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			var files []*csFile
			for i := range 12 {
				files = append(files, newCSFile(fmt.Sprintf("/memories/cs/d%d/f%d.md", i%3, i)))
			}
			for round := range rounds {
				rng := rand.New(rand.NewPCG(seed, uint64(round)))
				var procs []*exec.Cmd
				var bases []string
				for range servers {
					cmd, base := csStartServe(t, url, env)
					procs, bases = append(procs, cmd), append(bases, base)
				}
				var wg sync.WaitGroup
				var mu sync.Mutex // t's errors from the clients
				for c := range 4 {
					mine := files[c*3 : c*3+3]
					base := bases[c%servers]
					crng := rand.New(rand.NewPCG(seed, uint64(round*10+c+100)))
					wg.Go(func() { csClient(t, &mu, base, token, mine, crng) })
				}
				time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
				procs[0].Process.Kill() // the other server, if any, keeps serving its clients
				wg.Wait()
				for _, p := range procs {
					p.Process.Kill()
					p.Wait()
				}
				csCheck(t, url, "alice", env, files, nil, auditLog, listed)
				if t.Failed() {
					t.Fatalf("round %d failed (seed %d)", round, seed)
				}
			}
			csAfter(t, url, env, files, "alice")
		})
	}
}

// csClient sends its files' commands to base one request at a time, 60 in
// all, until one goes unanswered.
func csClient(t *testing.T, mu *sync.Mutex, base, token string, files []*csFile, rng *rand.Rand) {
	for range 60 {
		type sent struct {
			f       *csFile
			k       int
			refused bool
		}
		var cmds []map[string]any
		var plan []sent
		for _, j := range rng.Perm(len(files))[:1+rng.IntN(2)] {
			cmd, refused := files[j].next(rng)
			cmds, plan = append(cmds, cmd), append(plan, sent{files[j], len(files[j].states) - 1, refused})
		}
		var b []byte
		if len(cmds) == 1 {
			b, _ = json.Marshal(cmds[0])
		} else {
			b, _ = json.Marshal(cmds)
		}
		code, body, err := post(base, token, string(b))
		if err != nil || code != 200 {
			return // unanswered: the server is gone
		}
		as, err := csAnswers(body)
		mu.Lock()
		if err != nil || len(as) != len(plan) {
			t.Errorf("answer %q: %v", body, err)
		} else {
			for i, s := range plan {
				csJudge(t, s.f, s.k, s.refused, as[i])
			}
		}
		mu.Unlock()
	}
}

// csStartServe starts memtool serve on url in the environment env (its
// policy and key) and returns it and its base URL once it serves.
func csStartServe(t *testing.T, url string, env []string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(plainBinary(t), "serve", "--store", url, "--listen", "127.0.0.1:0")
	cmd.Env = childEnv(env...)
	errPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(errPipe)
	for sc.Scan() {
		var l struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "serving" {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, l.URL
		}
	}
	t.Fatal("memtool serve ended before serving")
	return nil, ""
}
