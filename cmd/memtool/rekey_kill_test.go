package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
)

// TestRekeyKilled: memtool rekey killed with SIGKILL at random moments,
// while another process keeps creating and editing files with the new key
// first, then run again to the end: after every kill each file is sealed
// with exactly one of the keys and opens to its text (the last one
// acknowledged to the writer, or the one it was given), and after the
// last run every file opens with the new key alone, its text unchanged.
// No acknowledged write is lost or left under the old key.
func TestRekeyKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memories")
	oldKey, _ := encrypt.NewKey("old")
	newKey, _ := encrypt.NewKey("new")
	rng := rand.New(rand.NewPCG(7, 11))
	want := map[string]string{} // store name → text
	var inputs []string
	for i := range 300 {
		name := fmt.Sprintf("d%d/f%03d.md", i%10, i)
		want[name] = fmt.Sprintf("file %d\n%s\n", i, strings.Repeat("x", rng.IntN(40_000)))
		inputs = append(inputs, fmt.Sprintf(`{"command":"create","path":"/memories/%s","file_text":%q}`, name, want[name]))
	}
	runThrough(t, dir, encryptedWith(t, oldKey), inputs...)
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"encrypt":true}`), 0o600)
	env := childEnv("MEMTOOL_KEY=" + newKey.Text() + "," + oldKey.Text())

	// check returns how many files are under the old key.
	check := func(when string, keys ...encrypt.Key) (underOld int) {
		t.Helper()
		fs, err := filestore.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer fs.Close()
		store, _ := encrypt.New(fs, keys, nil)
		for name, text := range want {
			raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil || len(raw) < encrypt.Overhead || string(raw[:4]) != "mte2" {
				t.Fatalf("%s: %s is %.20q, %v", when, name, raw, err)
			}
			switch id := string(bytes.TrimRight(raw[4:4+encrypt.MaxKeyIDLen], "\x00")); id {
			case "old":
				underOld++
			case "new":
			default:
				t.Fatalf("%s: %s is sealed with key %q", when, name, id)
			}
			if got, err := store.ReadFile(ctx, name, 1<<20); err != nil || string(got) != text {
				t.Fatalf("%s: %s reads %.40q, %v; want %.40q", when, name, got, err, text)
			}
		}
		return underOld
	}

	gen, midway, before := 0, 0, 300
	for round := range 8 {
		// The writer: one memtool exec, with the new key first, creating
		// a file and replacing a line of an old one, line by line.
		writer := exec.Command(plainBinary(t), "exec", "--store", dir, "--policy", policy)
		writer.Env = env
		var stdin strings.Builder
		// want is checked once the writer is done, so it takes each
		// change as it is sent.
		changes := 0
		for range 20 {
			gen++
			name := fmt.Sprintf("w/r%d-%d.md", round, gen)
			want[name] = fmt.Sprintf("written %d\n", gen)
			fmt.Fprintf(&stdin, `{"command":"create","path":"/memories/%s","file_text":"written %d\n"}`+"\n", name, gen)
			i := (gen * 7) % 300
			old := fmt.Sprintf("d%d/f%03d.md", i%10, i)
			first, rest, _ := strings.Cut(want[old], "\n")
			want[old] = fmt.Sprintf("edit %d\n%s", gen, rest)
			fmt.Fprintf(&stdin, `{"command":"str_replace","path":"/memories/%s","old_str":%q,"new_str":"edit %d"}`+"\n", old, first, gen)
			changes += 2
		}
		writer.Stdin = strings.NewReader(stdin.String())
		var wout, werr bytes.Buffer
		writer.Stdout, writer.Stderr = &wout, &werr
		if err := writer.Start(); err != nil {
			t.Fatal(err)
		}

		rekey := exec.Command(plainBinary(t), "rekey", "--store", dir)
		rekey.Env = env
		var rerr bytes.Buffer
		rekey.Stderr = &rerr
		if err := rekey.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { rekey.Wait(); close(done) }()
		// A random moment, but not before this rekey has sealed more
		// files with the new key than the writer's edits can (a loaded
		// machine may take longer to start it than the moment drawn).
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		for guard := time.Now().Add(hangGuard); sealedOld(t, dir) >= before-20 && time.Now().Before(guard); {
			select {
			case <-done:
				guard = time.Time{}
			case <-time.After(2 * time.Millisecond):
			}
		}
		rekey.Process.Kill()
		<-done
		if err := writer.Wait(); err != nil {
			t.Fatalf("writer: %v: %s", err, werr.String())
		}
		// Every change was acknowledged: the writer ran to its end.
		if n := strings.Count(wout.String(), "\n"); n != changes || strings.Contains(wout.String(), `"is_error":true`) {
			i := max(0, strings.Index(wout.String(), `"is_error":true`))
			t.Fatalf("writer answered %d lines, want %d: %.300s", n, changes, wout.String()[i:])
		}
		// More files left the old key than the writer's 20 edits took
		// away, and some are still under it: the kill struck part way.
		n := check(fmt.Sprintf("after kill %d", round), newKey, oldKey)
		t.Logf("round %d: %d under the old key", round, n)
		if n > 0 && before-n > 20 {
			midway++
		}
		before = n
	}
	// The kills must have struck a rekey part way for the test to show
	// anything; files are rekeyed one at a time, so most do.
	if midway == 0 {
		t.Error("no kill struck a rekey part way")
	}

	out, stderr, code := runMemtool(t, env, "", "rekey", "--store", dir)
	if code != 0 || !strings.Contains(stderr, "can be removed") {
		t.Fatalf("the last rekey: exit %d, %q, %q", code, out, stderr)
	}
	check("after the last rekey, with the new key alone", newKey)
	if len(want) < 300+8*20 {
		t.Fatalf("only %d files checked", len(want))
	}
}

// sealedOld is how many of the files of the store in dir are sealed with
// the key "old" (whose id their header names).
func sealedOld(t *testing.T, dir string) (n int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		raw := make([]byte, 4+encrypt.MaxKeyIDLen)
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		if _, err := io.ReadFull(f, raw); err == nil && string(bytes.TrimRight(raw[4:], "\x00")) == "old" {
			n++
		}
		return nil
	})
	return n
}
