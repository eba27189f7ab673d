package filestore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// The hostile-input corpus (testdata/hostile-paths.jsonl) is run line by
// line against a fresh file store laid out as the corpus expects:
//
//	<tmp>/memories          the store directory, backing /memories
//	<tmp>/outside/secret.txt  "OUTSIDE-SECRET", the escape target
//
// For every line: nothing outside the store directory changes (names, modes
// and contents of everything else under <tmp>), no answer contains the
// secret or the host path of <tmp>, no file in the store comes to hold the
// secret, and view /memories still succeeds. A "reject" line must also
// answer with an error and leave the store directory as it was.

const (
	hostileCorpus = "../testdata/hostile-paths.jsonl"
	outsideSecret = "OUTSIDE-SECRET"
	storeLockName = ".memtool.lock"
)

type hostileLine struct {
	ID            string          `json:"id"`
	Class         string          `json:"class"`
	Cmd           json.RawMessage `json:"cmd"`
	Expect        string          `json:"expect"`
	Note          string          `json:"note"`
	Setup         []setupOp       `json:"setup"`
	Platform      string          `json:"platform"`
	Layer         string          `json:"layer"`
	Tenant        *string         `json:"tenant"`
	URL           string          `json:"url"`
	PathB64       string          `json:"path_b64"`
	RawJSON       string          `json:"raw_json"`
	Gen           *genField       `json:"gen"`
	Race          *raceOp         `json:"race"`
	RootIsSymlink bool            `json:"root_is_symlink"`
}

type setupOp struct {
	Op      string  `json:"op"`
	Path    string  `json:"path"`
	Content *string `json:"content"`
	B64     string  `json:"b64"`
	Target  string  `json:"target"`
	Major   uint32  `json:"major"`
	Minor   uint32  `json:"minor"`
	Size    int64   `json:"size"`
}

type genField struct {
	Field  string `json:"field"`
	Prefix string `json:"prefix"`
	Repeat string `json:"repeat"`
	Count  int    `json:"count"`
}

type raceOp struct {
	Op         string `json:"op"`
	Path       string `json:"path"`
	Target     string `json:"target"`
	DurationMS int    `json:"duration_ms"`
}

func readHostileCorpus(t *testing.T) []hostileLine {
	t.Helper()
	f, err := os.Open(hostileCorpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []hostileLine
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		// Unknown fields fail the test: a new kind of hostile line needs
		// the harness to learn it, not to be run half-understood.
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var l hostileLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%s:%d: %v", hostileCorpus, n, err)
		}
		if l.ID == "" || seen[l.ID] {
			t.Fatalf("%s:%d: missing or duplicate id %q", hostileCorpus, n, l.ID)
		}
		seen[l.ID] = true
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 200 {
		t.Fatalf("%s holds %d lines; the corpus has at least 200", hostileCorpus, len(lines))
	}
	return lines
}

func TestHostilePaths(t *testing.T) {
	for _, l := range readHostileCorpus(t) {
		t.Run(l.ID, func(t *testing.T) {
			t.Parallel()
			runHostileLine(t, l)
		})
	}
}

// hostileEnv is one line's world.
type hostileEnv struct {
	base     string // <tmp>: its host path must never reach the model
	storeDir string // <tmp>/memories, as the store is opened
	realDir  string // where the store's entries really are
	outside  string // <tmp>/outside
	swapDir  string // <tmp>/swap: the race's spare entries
	// hostPaths are spellings of base that must never reach the model.
	hostPaths []string
}

func (e *hostileEnv) expand(s string) string {
	s = strings.ReplaceAll(s, "$OUTSIDE", e.outside)
	return strings.ReplaceAll(s, "$ROOT", e.storeDir)
}

func runHostileLine(t *testing.T, l hostileLine) {
	switch l.Layer {
	case "":
	case "tenant":
		t.Skipf("a tenant-id line: TestTenantCorpusLines in cmd/memtool runs it on every store (%s)", l.Note)
	case "http":
		t.Skipf("an HTTP-layer line: for the memory server, which does not exist yet (%s)", l.Note)
	default:
		t.Fatalf("unknown layer %q", l.Layer)
	}
	if l.Expect != "reject" && l.Expect != "contained" {
		t.Fatalf("unknown expect %q", l.Expect)
	}
	env := newHostileEnv(t, l.RootIsSymlink)
	for _, op := range l.Setup {
		applySetup(t, env, op)
	}
	var race *swapper
	if l.Race != nil {
		race = newSwapper(t, env, l.Race)
	}

	store := open(t, env.storeDir, nil)
	var log bytes.Buffer
	var logMu sync.Mutex
	mem := memtool.New(store, &memtool.Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &log}, nil))})
	t.Cleanup(func() {
		logMu.Lock()
		defer logMu.Unlock()
		if t.Failed() && log.Len() > 0 {
			t.Logf("memtool log:\n%s", log.String())
		}
	})

	outsideBefore := snapshotTree(t, env.base, env.storeDir, env.realDir)
	storeBefore := snapshotTree(t, env.realDir)
	secretsBefore := holdingSecret(storeBefore)

	run := hostileRunner(t, l)
	ctx := context.Background()
	var results []memtool.Result
	if race == nil {
		results = run(ctx, mem)
	} else {
		results = race.during(func() []memtool.Result { return run(ctx, mem) })
	}

	bad := 0
	for i, r := range results {
		if bad == 3 {
			// A race repeats one mistake thousands of times; three tell it.
			t.Errorf("… and more answers fail; only the first three are shown")
			break
		}
		var problems []string
		problems = append(problems, answerLeaks(env, r)...)
		if l.Expect == "reject" && (!r.IsError || !strings.HasPrefix(r.Text, "Error: ")) {
			problems = append(problems, "a reject line answered without an error")
		}
		if len(problems) > 0 {
			bad++
			t.Errorf("answer %d of %d: %s: %q", i+1, len(results), strings.Join(problems, "; "), clipAnswer(r.Text))
		}
		if strings.Contains(r.Text, "Internal error") {
			t.Logf("answer %d is an internal error: %q", i+1, r.Text)
		}
	}
	if len(results) > 0 && !t.Failed() {
		t.Logf("memtool answered: %q", clipAnswer(results[0].Text))
	}

	if diff := diffSnapshots(outsideBefore, snapshotTree(t, env.base, env.storeDir, env.realDir)); diff != "" {
		t.Errorf("something outside the store changed:\n%s", diff)
	}
	storeAfter := snapshotTree(t, env.realDir)
	if l.Expect == "reject" {
		if diff := diffSnapshots(storeBefore, storeAfter); diff != "" {
			t.Errorf("reject line changed the store:\n%s", diff)
		}
	}
	for _, name := range holdingSecret(storeAfter) {
		if !slices.Contains(secretsBefore, name) {
			t.Errorf("store file %s now holds the outside secret", name)
		}
	}
	for name, e := range storeAfter {
		if e.mode&fs.ModeSymlink != 0 && storeBefore[name] != e {
			t.Errorf("a symbolic link appeared in the store: %s -> %s", name, e.target)
		}
	}
	if fi, err := os.Lstat(env.realDir); err != nil || !fi.IsDir() {
		t.Fatalf("the store directory is gone: %v", err)
	}
	r := mem.Execute(ctx, &memtool.View{Path: "/memories"})
	if p := answerLeaks(env, r); r.IsError || len(p) > 0 {
		t.Errorf("view /memories afterwards: is_error=%v %v: %q", r.IsError, p, clipAnswer(r.Text))
	}
}

func newHostileEnv(t *testing.T, rootIsSymlink bool) *hostileEnv {
	base := t.TempDir()
	env := &hostileEnv{
		base:     base,
		storeDir: filepath.Join(base, "memories"),
		realDir:  filepath.Join(base, "memories"),
		outside:  filepath.Join(base, "outside"),
		swapDir:  filepath.Join(base, "swap"),
	}
	env.hostPaths = []string{base}
	if real, err := filepath.EvalSymlinks(base); err == nil && real != base {
		env.hostPaths = append(env.hostPaths, real)
	}
	mustDo(t, os.Mkdir(env.outside, 0o755))
	mustDo(t, os.WriteFile(filepath.Join(env.outside, "secret.txt"), []byte(outsideSecret), 0o644))
	if rootIsSymlink {
		// The configured directory is a link to the real one.
		env.realDir = filepath.Join(base, "memories-real")
		mustDo(t, os.Mkdir(env.realDir, 0o700))
		mustDo(t, os.Symlink(env.realDir, env.storeDir))
	} else {
		mustDo(t, os.Mkdir(env.storeDir, 0o700))
	}
	return env
}

// applySetup does one setup op, as a host process would, relative to the
// store directory.
func applySetup(t *testing.T, env *hostileEnv, op setupOp) {
	t.Helper()
	if op.Path == "" || filepath.IsAbs(op.Path) {
		t.Fatalf("setup %s: bad path %q", op.Op, op.Path)
	}
	p := filepath.Join(env.realDir, filepath.FromSlash(op.Path))
	if op.Op != "mkdir" {
		mustDo(t, os.MkdirAll(filepath.Dir(p), 0o700))
	}
	switch op.Op {
	case "write":
		data := []byte(nil)
		switch {
		case op.Content != nil:
			data = []byte(*op.Content)
		case op.B64 != "":
			var err error
			data, err = base64.StdEncoding.DecodeString(op.B64)
			mustDo(t, err)
		}
		mustDo(t, os.WriteFile(p, data, 0o600))
	case "mkdir":
		mustDo(t, os.MkdirAll(p, 0o700))
	case "symlink":
		mustDo(t, os.Symlink(env.expand(op.Target), p))
	case "hardlink":
		mustDo(t, os.Link(env.expand(op.Target), p))
	case "mkfifo":
		mustDo(t, unix.Mkfifo(p, 0o600))
	case "unixsocket":
		makeSocket(t, p)
	case "mknod":
		if os.Geteuid() != 0 {
			t.Logf("setup mknod %s skipped: needs root", op.Path)
			return
		}
		err := unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(op.Major, op.Minor)))
		if errors.Is(err, unix.EPERM) {
			t.Logf("setup mknod %s skipped: %v (no CAP_MKNOD)", op.Path, err)
			return
		}
		mustDo(t, err)
	case "sparse":
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		mustDo(t, err)
		mustDo(t, f.Truncate(op.Size))
		mustDo(t, f.Close())
	default:
		t.Fatalf("unknown setup op %q", op.Op)
	}
}

// makeSocket binds a Unix socket at p and closes it, leaving the socket
// file. A path too long for sockaddr_un gets the same inode type by mknod.
func makeSocket(t *testing.T, p string) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	mustDo(t, err)
	defer unix.Close(fd)
	if len(p) < 100 {
		mustDo(t, unix.Bind(fd, &unix.SockaddrUnix{Name: p}))
		return
	}
	mustDo(t, unix.Mknod(p, unix.S_IFSOCK|0o600, 0))
}

// hostileRunner returns the function that sends the line's input to
// memtool and collects the answers.
func hostileRunner(t *testing.T, l hostileLine) func(context.Context, *memtool.Memory) []memtool.Result {
	switch {
	case l.RawJSON != "":
		// The exact wire bytes: JSON escapes, duplicate keys.
		raw := []byte(l.RawJSON)
		return func(ctx context.Context, m *memtool.Memory) []memtool.Result {
			return []memtool.Result{m.Run(ctx, raw)}
		}
	case l.PathB64 != "":
		// Bytes no JSON decoder would let through: the Go API gets them as is.
		raw, err := base64.StdEncoding.DecodeString(l.PathB64)
		mustDo(t, err)
		cmd := typedCommand(t, l.Cmd)
		field := "path"
		if _, ok := cmd.(*memtool.Rename); ok {
			field = "old_path"
		}
		setCommandField(t, cmd, field, string(raw))
		return func(ctx context.Context, m *memtool.Memory) []memtool.Result {
			return []memtool.Result{m.Execute(ctx, cmd)}
		}
	case l.Gen != nil:
		// The huge field goes both through the wire (Run) and straight to
		// Execute, so the parser's bound and Memory's limits are both tried.
		g := l.Gen
		value := g.Prefix + strings.Repeat(g.Repeat, g.Count)
		var obj map[string]any
		mustDo(t, json.Unmarshal(l.Cmd, &obj))
		obj[g.Field] = value
		wire, err := json.Marshal(obj)
		mustDo(t, err)
		cmd := typedCommand(t, l.Cmd)
		setCommandField(t, cmd, g.Field, value)
		return func(ctx context.Context, m *memtool.Memory) []memtool.Result {
			return []memtool.Result{m.Run(ctx, wire), m.Execute(ctx, cmd)}
		}
	}
	input := []byte(l.Cmd)
	return func(ctx context.Context, m *memtool.Memory) []memtool.Result {
		return []memtool.Result{m.Run(ctx, input)}
	}
}

func typedCommand(t *testing.T, input []byte) memtool.Command {
	t.Helper()
	cmd, err := memtool.ParseCommand(input)
	if err != nil {
		t.Fatalf("ParseCommand(%s): %v", input, err)
	}
	return cmd
}

// setCommandField sets cmd's string field that the tool input calls field
// (old_str: OldStr) to value.
func setCommandField(t *testing.T, cmd memtool.Command, field, value string) {
	t.Helper()
	var goName strings.Builder
	for _, word := range strings.Split(field, "_") {
		goName.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	f := reflect.ValueOf(cmd).Elem().FieldByName(goName.String())
	if f.Kind() != reflect.String {
		t.Fatalf("cannot set field %q of a %s command", field, cmd.Name())
	}
	f.SetString(value)
}

func answerLeaks(env *hostileEnv, r memtool.Result) []string {
	texts := []string{r.Text}
	if r.Image != nil {
		texts = append(texts, string(r.Image.Data))
	}
	var out []string
	for _, s := range texts {
		if strings.Contains(s, outsideSecret) {
			out = append(out, "it leaks the outside secret")
		}
		for _, hp := range env.hostPaths {
			if strings.Contains(s, hp) {
				out = append(out, "it leaks a host path")
			}
		}
	}
	return out
}

func clipAnswer(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// ---- snapshots ----

type snapEntry struct {
	mode   fs.FileMode
	size   int64
	sum    string // sha256 of a regular file's content (files up to snapshotLimit)
	target string // a symbolic link's target
	rdev   uint64
}

func (e snapEntry) String() string {
	s := e.mode.String()
	switch {
	case e.sum != "":
		s += fmt.Sprintf(" %d bytes %s", e.size, e.sum)
	case e.target != "":
		s += " -> " + e.target
	case e.rdev != 0:
		s += fmt.Sprintf(" device %#x", e.rdev)
	}
	return s
}

// snapshotLimit: bigger files (the sparse 4 GiB one) are compared by size
// and inode instead of content.
const snapshotLimit = 64 << 20

// snapshotTree records every entry under dir, without following links, except
// the paths in skip and the store's lock file.
func snapshotTree(t *testing.T, dir string, skip ...string) map[string]snapEntry {
	t.Helper()
	snap := map[string]snapEntry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == storeLockName || (p != dir && slices.Contains(skip, p)) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := snapEntry{mode: fi.Mode()}
		st := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode().IsRegular() && fi.Size() <= snapshotLimit:
			e.size = fi.Size()
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			e.sum = hex.EncodeToString(sum[:])
			if bytes.Contains(data, []byte(outsideSecret)) {
				e.sum += " " + outsideSecret
			}
		case fi.Mode().IsRegular():
			e.size = fi.Size()
			e.sum = fmt.Sprintf("inode %d", st.Ino)
		case fi.Mode()&fs.ModeSymlink != 0:
			e.target, err = os.Readlink(p)
			if err != nil {
				return err
			}
		case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			e.rdev = uint64(st.Rdev)
		}
		snap[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return snap
}

// holdingSecret lists the files of a snapshot whose content holds the secret.
func holdingSecret(snap map[string]snapEntry) []string {
	var out []string
	for name, e := range snap {
		if strings.HasSuffix(e.sum, " "+outsideSecret) {
			out = append(out, name)
		}
	}
	return out
}

func diffSnapshots(before, after map[string]snapEntry) string {
	var lines []string
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			lines = append(lines, "  removed: "+name)
		case a != b:
			lines = append(lines, fmt.Sprintf("  changed: %s: %v => %v", name, b, a))
		}
	}
	for name, a := range after {
		if _, ok := before[name]; !ok {
			lines = append(lines, fmt.Sprintf("  added: %s: %v", name, a))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// ---- races ----

// A swapper exchanges an snapEntry of the store with a symbolic link to the
// outside, over and over, while a command runs in a loop.
type swapper struct {
	t        *testing.T
	inside   string // the snapEntry in the store
	spare    string // where the link waits while the real snapEntry is away
	duration time.Duration
}

func newSwapper(t *testing.T, env *hostileEnv, r *raceOp) *swapper {
	if r.Op != "swap_dir_symlink" && r.Op != "swap_file_symlink" {
		t.Fatalf("unknown race op %q", r.Op)
	}
	inside := filepath.Join(env.realDir, filepath.FromSlash(r.Path))
	fi, err := os.Lstat(inside)
	mustDo(t, err)
	if (r.Op == "swap_dir_symlink") != fi.IsDir() {
		t.Fatalf("race %s: %s is a %v", r.Op, r.Path, fi.Mode().Type())
	}
	mustDo(t, os.MkdirAll(env.swapDir, 0o700))
	spare := filepath.Join(env.swapDir, "spare")
	mustDo(t, os.Symlink(env.expand(r.Target), spare))
	// The corpus asks for seconds; a fraction of that exercises the same
	// windows without slowing the suite.
	d := min(time.Duration(r.DurationMS)*time.Millisecond, 200*time.Millisecond)
	if testing.Short() {
		d = min(d, 50*time.Millisecond)
	}
	return &swapper{t: t, inside: inside, spare: spare, duration: d}
}

// exchange swaps the two entries, atomically where the kernel can.
func (s *swapper) exchange() error {
	err := unix.Renameat2(unix.AT_FDCWD, s.inside, unix.AT_FDCWD, s.spare, unix.RENAME_EXCHANGE)
	if err != unix.EINVAL && err != unix.ENOSYS {
		return err
	}
	tmp := s.spare + ".tmp"
	if err := os.Rename(s.inside, tmp); err != nil {
		return err
	}
	if err := os.Rename(s.spare, s.inside); err != nil {
		return err
	}
	return os.Rename(tmp, s.spare)
}

// during runs fn in a loop while the entries are swapped, then puts the
// real snapEntry back and returns every answer.
func (s *swapper) during(fn func() []memtool.Result) []memtool.Result {
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(s.duration)
		swaps := 0
		var err error
		for time.Now().Before(deadline) {
			if err = s.exchange(); err != nil {
				break
			}
			swaps++
		}
		// Leave the real snapEntry inside, the link in the spare place.
		if err == nil && swaps%2 == 1 {
			err = s.exchange()
		}
		done <- err
	}()
	var results []memtool.Result
	for running := true; running; {
		results = append(results, fn()...)
		select {
		case err := <-done:
			if err != nil {
				s.t.Fatalf("race: %v", err)
			}
			running = false
		default:
		}
	}
	if fi, err := os.Lstat(s.inside); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		s.t.Fatalf("race: the real snapEntry was not put back: %v", err)
	}
	s.t.Logf("race: the command ran %d times while the entries were swapped", len(results))
	return results
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
