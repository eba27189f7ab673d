package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
)

var crashSeed = flag.Uint64("crash.seed", 0, "seed of TestCrashSafety (0: pick one and log it)")

// TestCrashSafety kills `memtool exec` with SIGKILL at random moments while
// it rewrites files, and checks after each kill, once a new memtool has
// opened the store, that
//   - every acknowledged change is there: each subject's state on disk is the
//     one after its last acknowledged command, or after a later command that
//     was sent but not yet answered;
//   - no file is torn: big files carry the SHA-256 of their rest in their
//     first line, and every file's bytes are exactly some version that was sent;
//   - no directory is half moved or half deleted;
//   - the store's temp files and trash are gone, on disk and in `view`.
//
// SIGKILL ends the process, not the machine: this checks atomicity and
// acknowledgement order, not that fsync reaches the disk.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	kills := 40
	if testing.Short() {
		kills = 10
	}
	crashSafety(t, t.TempDir(), kills, 1, nil)
}

// TestCrashSafetyUnderPolicies is TestCrashSafety under every policy that
// leaves the files readable on disk (history, expiry, limits, secret
// filtering, audit), with fewer kills. It also checks what the policies
// keep: every version history kept of a big file is whole (its checksum
// holds), and the access index of expiry still reads.
func TestCrashSafetyUnderPolicies(t *testing.T) {
	t.Parallel()
	kills := 8
	if testing.Short() {
		kills = 3
	}
	dir := t.TempDir()
	key, _ := encrypt.NewKey("k1")
	env := policyEnv(t, fmt.Sprintf(`{"history":{"max_versions":3},"expiry":true,"limits":{"max_file_size":1048576},"secrets":"reject","audit":%q}`, filepath.Join(t.TempDir(), "audit.jsonl")), key)
	crashSafety(t, dir, kills, 4, env) // the policies make each command slower

	ctx := context.Background()
	st := openVia(t, dir, env)
	versionsSeen := 0
	for i := range 4 {
		p := fmt.Sprintf("/memories/crash/f%d.txt", i)
		vs, err := versions.Versions(ctx, st.belowHistory, p)
		if err != nil {
			t.Fatalf("versions of %s: %v", p, err)
		}
		for _, v := range vs {
			data, err := versions.Read(ctx, st.belowHistory, p, v.N)
			if err != nil {
				t.Fatalf("version %d of %s: %v", v.N, p, err)
			}
			if snap := bigFileSnap(string(data), true); strings.HasPrefix(snap, "torn") {
				t.Errorf("version %d of %s is %s", v.N, p, snap)
			}
			versionsSeen++
		}
	}
	if _, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 24 * time.Hour, DryRun: true}); err != nil {
		t.Errorf("the access index after the kills: %v", err)
	}
	t.Logf("%d kept versions checked", versionsSeen)
}

// crashSafety runs TestCrashSafety's kills on the store in dir, with the
// extra environment variables env (a policy) for every memtool, and the
// delays before the kills stretched by slow.
func crashSafety(t *testing.T, dir string, kills, slow int, env []string) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	subjects := []subject{
		newBigFile("f0.txt"), newBigFile("f1.txt"), newBigFile("f2.txt"), newBigFile("f3.txt"),
		&treeSubject{model: treeModel{s: -1}},
		&moverSubject{},
	}
	for _, s := range subjects {
		s.reset(s.current())
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	var st crashStats
	for round := range kills {
		// Every fourth kill counts from the start of the process, so that
		// some land while it opens and sweeps the store; the others count
		// from its first answer, so that they land among the writes.
		delay := time.Duration(slow*(5+rng.IntN(46))) * time.Millisecond
		fromStart := round%4 == 0
		crashRound(t, dir, env, subjects, rand.New(rand.NewPCG(seed, uint64(round)+1)), fromStart, delay, &st)
		if t.Failed() {
			t.Fatalf("round %d (kill %v after the start: %v) failed; seed %d", round, delay, fromStart, seed)
		}
	}
	t.Logf("%d kills; %d commands sent, %d acknowledged, %d found done though unanswered; %d temp or trash entries left by kills and swept; %d subject states checked (%d big-file versions)",
		kills, st.sent, st.acked, st.doneUnacked, st.leftovers, st.checked, st.files)
}

type crashStats struct {
	sent, acked, doneUnacked, leftovers, checked, files int
}

// A subject is a part of the store that one kind of command sequence
// changes. Its history lists the states that the commands sent in this
// round lead to: history[0] is the state at the start of the round,
// history[k] the state after its k-th command.
type subject interface {
	// next advances the model by one command and returns that command.
	next(rng *rand.Rand) map[string]any
	// current returns the model state: its canonical snapshot and a copy of
	// the model that reset can restore.
	current() state
	// disk reads the subject's snapshot from the store directory.
	disk(dir string) string
	reset(state)
	hist() *history
}

type state struct {
	snap  string
	model any
}

type history struct {
	states []state
	acked  int // index of the last acknowledged command's state
}

func (h *history) start(s state) { h.states, h.acked = []state{s}, 0 }

// crashRound runs one memtool exec, kills it after delay (counted from its
// start, or from its first answer), and checks the store.
func crashRound(t *testing.T, dir string, env []string, subjects []subject, rng *rand.Rand, fromStart bool, delay time.Duration, st *crashStats) {
	cmd := exec.Command(memtoolBinary(t), "exec", "--overwrite", "--store", dir)
	cmd.Env = childEnv(env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)

	type sentCmd struct {
		h   *history
		idx int
	}
	pending := make(chan sentCmd, 1<<16)
	ready := make(chan struct{}) // closed on the first answer, or when the output ends
	var stop sync.WaitGroup
	var unexpected []string
	stop.Go(func() { // writer
		defer close(pending)
		pending <- sentCmd{} // a view, to learn that the store is open
		if _, err := io.WriteString(stdin, jsonLine(map[string]any{"command": "view", "path": "/memories"})); err != nil {
			return
		}
		for range cap(pending) - 1 {
			s := subjects[rng.IntN(len(subjects))]
			input := s.next(rng)
			h := s.hist()
			h.states = append(h.states, s.current())
			pending <- sentCmd{h, len(h.states) - 1}
			if _, err := io.WriteString(stdin, jsonLine(input)); err != nil {
				return // killed
			}
		}
	})
	stop.Go(func() { // reader
		defer func() {
			select {
			case <-ready:
			default:
				close(ready)
			}
		}()
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // killed; a line cut short is not an answer
			}
			sc, ok := <-pending
			if !ok {
				unexpected = append(unexpected, "an answer to no command: "+line)
				return
			}
			var a answer
			if err := json.Unmarshal([]byte(line), &a); err != nil || a.IsError {
				unexpected = append(unexpected, line)
				continue
			}
			if sc.h == nil {
				close(ready)
				continue
			}
			sc.h.acked = sc.idx
		}
	})
	if !fromStart {
		<-ready
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	stop.Wait()
	stdin.Close()
	checkNoRace(t, stderr.String())
	for _, u := range unexpected {
		t.Errorf("unexpected answer: %.300s", u)
	}
	if len(unexpected) > 0 && stderr.Len() > 0 {
		t.Logf("memtool's stderr:\n%s", stderr.String())
	}

	// Restart: a new memtool opens the store (and sweeps it); its view of
	// the root must show only the subjects, and the disk no leftovers.
	st.leftovers += countLeftovers(t, dir)
	restart := startChildEnv(t, env, "--store", dir)
	view, err := restart.answer(jsonLine(map[string]any{"command": "view", "path": "/memories"}))
	restart.stop(t)
	if err != nil || restart.stderr.Len() > 0 {
		t.Fatalf("memtool exec after a kill: %v\nstderr:\n%s", err, restart.stderr)
	}
	if view.IsError || strings.Contains(view.Text(), ".memtool") {
		t.Errorf("view /memories after a kill: %s", view.Content)
	}
	if n := countLeftovers(t, dir); n > 0 {
		t.Errorf("%d temp or trash entries are still on disk after a restart", n)
	}

	for _, s := range subjects {
		h := s.hist()
		got := s.disk(dir)
		st.sent += len(h.states) - 1
		st.acked += h.acked
		st.checked++
		match := -1
		for k := len(h.states) - 1; k >= h.acked; k-- {
			if h.states[k].snap == got {
				match = k
				break
			}
		}
		if match < 0 {
			var want []string
			for _, s := range h.states[h.acked:] {
				want = append(want, s.snap)
			}
			t.Errorf("a change was lost or torn: on disk %q; want one of (last acknowledged first) %q", got, want)
			continue
		}
		if match > h.acked {
			st.doneUnacked++
		}
		if _, ok := s.(*bigFile); ok && got != "absent" {
			st.files++
		}
		s.reset(h.states[match])
	}
}

// countLeftovers counts the temp files and trash directories under dir.
func countLeftovers(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The file store's temp files and trash; the policies' own
		// entries (.memtool-history, .memtool-expiry*) and the policy
		// record are no leftovers.
		if strings.HasPrefix(d.Name(), ".memtool-tmp-") || strings.HasPrefix(d.Name(), ".memtool-trash-") {
			n++
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ---- big files ----

// bigFile is a file of up to 1 MiB that is rewritten whole (create with
// --overwrite), has its first line replaced (str_replace) or gets a new first
// line (insert at 0). Its first line is always "H <sha256 of the rest> gen N".
type bigFile struct {
	name    string
	h       history
	content string
	exists  bool
	gen     int
}

func newBigFile(name string) *bigFile { return &bigFile{name: name} }

func (f *bigFile) path() string   { return "/memories/crash/" + f.name }
func (f *bigFile) hist() *history { return &f.h }

func header(rest string, gen int) string {
	sum := sha256.Sum256([]byte(rest))
	return fmt.Sprintf("H %s gen %d", hex.EncodeToString(sum[:]), gen)
}

// randomBody returns n bytes or so of base64 lines.
func randomBody(rng *rand.Rand, n int) string {
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	for len(enc) > 64 {
		b.WriteString(enc[:64])
		b.WriteByte('\n')
		enc = enc[64:]
	}
	b.WriteString(enc)
	return b.String()
}

func (f *bigFile) next(rng *rand.Rand) map[string]any {
	f.gen++
	op := rng.IntN(10)
	switch {
	case !f.exists || op < 4 || len(f.content) > 900<<10:
		size := (4 << 10) << rng.IntN(7) // 4 KiB to 256 KiB, then up to twice that
		body := randomBody(rng, size+rng.IntN(size))
		f.content, f.exists = header(body, f.gen)+"\n"+body, true
		return map[string]any{"command": "create", "path": f.path(), "file_text": f.content}
	case op < 7:
		first, rest, _ := strings.Cut(f.content, "\n")
		h := header(rest, f.gen)
		f.content = h + "\n" + rest
		return map[string]any{"command": "str_replace", "path": f.path(), "old_str": first + "\n", "new_str": h + "\n"}
	default:
		h := header(f.content, f.gen)
		f.content = h + "\n" + f.content
		return map[string]any{"command": "insert", "path": f.path(), "insert_line": 0, "insert_text": h + "\n"}
	}
}

type bigFileModel struct {
	content string
	exists  bool
	gen     int
}

func (f *bigFile) current() state {
	return state{bigFileSnap(f.content, f.exists), bigFileModel{f.content, f.exists, f.gen}}
}

func (f *bigFile) reset(s state) {
	m := s.model.(bigFileModel)
	f.content, f.exists, f.gen = m.content, m.exists, m.gen
	f.h.start(s)
}

// bigFileSnap checks the file's own checksum and names its exact version.
func bigFileSnap(content string, exists bool) string {
	if !exists {
		return "absent"
	}
	first, rest, _ := strings.Cut(content, "\n")
	fields := strings.Fields(first)
	if len(fields) != 4 || fields[0] != "H" || fields[2] != "gen" {
		return fmt.Sprintf("torn: first line %.80q", first)
	}
	gen, err := strconv.Atoi(fields[3])
	if err != nil || header(rest, gen) != first {
		return fmt.Sprintf("torn: checksum mismatch, first line %.80q, %d bytes", first, len(content))
	}
	sum := sha256.Sum256([]byte(content))
	return fmt.Sprintf("gen %d, %d bytes, sha256 %x", gen, len(content), sum[:8])
}

func (f *bigFile) disk(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "crash", f.name))
	if os.IsNotExist(err) {
		return "absent"
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return bigFileSnap(string(b), true)
}

// ---- a directory built, moved whole, and deleted whole ----

// treeSubject builds /memories/crash/tree/s one file at a time, renames s
// to d in one command, and deletes d in one command. d is never seen with
// fewer than its three files.
type treeSubject struct {
	h     history
	model treeModel
}

type treeModel struct {
	s int  // files in tree/s (-1: no s)
	d bool // tree/d holds 1.txt, 2.txt, 3.txt
}

var treeText = []string{"", "one", "two", "three"}

func (ts *treeSubject) hist() *history { return &ts.h }

func (ts *treeSubject) next(*rand.Rand) map[string]any {
	m := &ts.model
	switch {
	case m.d:
		m.d = false
		return map[string]any{"command": "delete", "path": "/memories/crash/tree/d"}
	case m.s == 3:
		m.s, m.d = -1, true
		return map[string]any{"command": "rename", "old_path": "/memories/crash/tree/s", "new_path": "/memories/crash/tree/d"}
	}
	m.s = max(m.s, 0) + 1
	return map[string]any{"command": "create", "path": fmt.Sprintf("/memories/crash/tree/s/%d.txt", m.s), "file_text": treeText[m.s]}
}

func (ts *treeSubject) current() state {
	var files []string
	for i := 1; i <= ts.model.s; i++ {
		files = append(files, fmt.Sprintf("s/%d.txt=%s", i, treeText[i]))
	}
	if ts.model.d {
		for i := 1; i <= 3; i++ {
			files = append(files, fmt.Sprintf("d/%d.txt=%s", i, treeText[i]))
		}
	}
	slices.Sort(files)
	return state{strings.Join(files, " "), ts.model}
}

func (ts *treeSubject) reset(s state) {
	ts.model = s.model.(treeModel)
	ts.h.start(s)
}

func (ts *treeSubject) disk(dir string) string {
	return filesUnder(filepath.Join(dir, "crash", "tree"))
}

// filesUnder lists the files under root as "rel=content", sorted. Empty
// directories, which a kill between a create's mkdir and its write may
// leave, do not show.
func filesUnder(root string) string {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel)+"="+string(b))
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return "unreadable: " + err.Error()
	}
	slices.Sort(files)
	return strings.Join(files, " ")
}

// ---- a file moved back and forth between directories ----

type moverSubject struct {
	h   history
	loc string // "": not created yet
}

const moverText = "the file that moves"

func (ms *moverSubject) hist() *history { return &ms.h }

func (ms *moverSubject) next(*rand.Rand) map[string]any {
	switch ms.loc {
	case "":
		ms.loc = "a.txt"
		return map[string]any{"command": "create", "path": "/memories/crash/mv/a.txt", "file_text": moverText}
	case "a.txt":
		ms.loc = "sub/b.txt"
		return map[string]any{"command": "rename", "old_path": "/memories/crash/mv/a.txt", "new_path": "/memories/crash/mv/sub/b.txt"}
	}
	ms.loc = "a.txt"
	return map[string]any{"command": "rename", "old_path": "/memories/crash/mv/sub/b.txt", "new_path": "/memories/crash/mv/a.txt"}
}

func (ms *moverSubject) current() state {
	if ms.loc == "" {
		return state{"", ""}
	}
	return state{ms.loc + "=" + moverText, ms.loc}
}

func (ms *moverSubject) reset(s state) {
	ms.loc = s.model.(string)
	ms.h.start(s)
}

func (ms *moverSubject) disk(dir string) string { return filesUnder(filepath.Join(dir, "crash", "mv")) }
