package stacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/sqlitestore"
)

// The fault sweep runs each scenario's command through the full stack
// over a faultStore, failing its first call, then its second, and so on
// until the command runs without reaching the fault, in each faultMode,
// over each base store. After every run it checks what the model was
// told against what the store holds:
//
//   - success: the memory and the kept versions are those of the run
//     without a fault;
//   - an ordinary error: they are as before (the command changed
//     nothing);
//   - "may or may not have been made": they are as before or as after,
//     nothing in between;
//
// with the documented exceptions (see sameUnpruned, withoutNewEmptyDirs,
// faultScenario's fallback, partial and partialView); that nothing is
// left that the policies would trip over (a tombstone, a file that does
// not decrypt, an unreadable access index, an access recorded for a new
// or changed file from before it, a delete left in history's trash that
// the next delete cannot finish); and that the next commands work.

// A faultScenario is a command run on the memory setupCommands make,
// or a management operation.
type faultScenario struct {
	name string
	cmd  map[string]any
	// op, if set, runs instead of cmd, on the stack over the faultStore.
	op func(ctx context.Context, st *stack) error
	// prepare runs after setupCommands, at setupTime.
	prepare func(t *testing.T, st *stack)
	// overwrite: create replaces a file (memtool.Options.Overwrite).
	overwrite bool
	history   *history.Options
	// fallback: over a base without an atomic rename, or without
	// RemoveAll, the command is several steps (memtool.Move, RemoveAll),
	// documented as not atomic: a failure may leave part done.
	fallback bool
	// partialView: a view that lists a directory whose subdirectory
	// cannot be read lists it without its entries (see memtool's
	// listing), and says nothing of it.
	partialView bool
	// partial: the operation is documented to stop part way on a
	// failure (expiry.Collect), keeping what it did.
	partial bool
	limits  *limits.Options
}

var setupCommands = []map[string]any{
	create("/memories/notes.md", "line one\nline two\n"),
	{"command": "str_replace", "path": "/memories/notes.md", "old_str": "two", "new_str": "2"},
	create("/memories/dir/a.md", "alpha\n"),
	create("/memories/dir/sub/b.md", "beta\n"),
	create("/memories/empty/keep.md", "k"),
	{"command": "delete", "path": "/memories/empty/keep.md"},
}

func strReplace(p, old, new string) map[string]any {
	return map[string]any{"command": "str_replace", "path": p, "old_str": old, "new_str": new}
}

func faultScenarios() []faultScenario {
	counting := &limits.Options{MaxFiles: 100, MaxBytes: 1 << 20, MaxFileSize: 1 << 16}
	return []faultScenario{
		{name: "view file", cmd: map[string]any{"command": "view", "path": "/memories/notes.md"}},
		{name: "view dir", cmd: map[string]any{"command": "view", "path": "/memories/dir"}, partialView: true},
		{name: "create", cmd: create("/memories/new.md", "new text\n")},
		{name: "create nested", cmd: create("/memories/x/y/new.md", "new text\n"), limits: counting},
		{name: "create existing", cmd: create("/memories/notes.md", "other\n")},
		{name: "create over quota", cmd: create("/memories/big.md", strings.Repeat("b", 200)), limits: &limits.Options{MaxBytes: 100}},
		{name: "str_replace", cmd: strReplace("/memories/notes.md", "one", "1"), limits: counting},
		{name: "str_replace not found", cmd: strReplace("/memories/notes.md", "absent", "x")},
		{name: "insert", cmd: map[string]any{"command": "insert", "path": "/memories/dir/a.md", "insert_line": 1, "insert_text": "more"}},
		{name: "delete file", cmd: map[string]any{"command": "delete", "path": "/memories/notes.md"}},
		{name: "delete empty dir", cmd: map[string]any{"command": "delete", "path": "/memories/empty"}, fallback: true},
		{name: "delete tree", cmd: map[string]any{"command": "delete", "path": "/memories/dir"}, fallback: true},
		{name: "rename file", cmd: map[string]any{"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/moved/notes.md"}, fallback: true, limits: counting},
		{name: "rename dir", cmd: map[string]any{"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir2"}, fallback: true},
		{name: "create overwrite", cmd: create("/memories/notes.md", "other\n"), overwrite: true},
		{name: "str_replace pruning", cmd: strReplace("/memories/notes.md", "one", "1"), history: &history.Options{MaxVersions: 1, MaxAge: -1}},
		{name: "revert", op: func(ctx context.Context, st *stack) error {
			return history.Revert(ctx, st.top, st.belowHistory, "/memories/notes.md", 1)
		}},
		{name: "revert deleted", op: func(ctx context.Context, st *stack) error {
			return history.Revert(ctx, st.top, st.belowHistory, "/memories/empty/keep.md", 1)
		}},
		{name: "collect", partial: true, op: func(ctx context.Context, st *stack) error {
			_, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: runClock})
			return err
		}},
		{name: "restore", fallback: true, prepare: func(t *testing.T, st *stack) {
			if _, err := expiry.Collect(context.Background(), st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: collectClock}); err != nil {
				t.Fatal(err)
			}
		}, op: func(ctx context.Context, st *stack) error {
			_, err := expiry.Restore(ctx, st.belowExpiry, "/memories/dir/a.md", runClock())
			return err
		}},
		{name: "rekey", op: func(ctx context.Context, st *stack) error {
			es, err := encrypt.New(st.belowExpiry.(memtool.Wrapper).Unwrap(), []encrypt.Key{sweepKeys[1], sweepKeys[0]}, nil)
			if err != nil {
				return err
			}
			_, err = encrypt.Rekey(ctx, es, policyData...)
			return err
		}},
	}
}

// sweepKeys: the stack writes with the first and reads with both, as the
// processes of a store being rekeyed are given them; rekey moves to the
// second. (A process without the second cannot read the access index
// rekey sealed with it, and the expiry policy then refuses a change it
// cannot record.)
var sweepKeys = func() []encrypt.Key {
	k1, err1 := encrypt.NewKey("k1")
	k2, err2 := encrypt.NewKey("k2")
	if err := errors.Join(err1, err2); err != nil {
		panic(err)
	}
	return []encrypt.Key{k1, k2}
}()

// A snapshot is what a store holds, read below the policies.
type snapshot struct {
	// tree: the memory as the model sees it; a directory ends in "/"
	// and holds "", a file holds its text, or a mark of what is wrong
	// with it (a tombstone, a file that does not open).
	tree map[string]string
	// versions: the texts history keeps for each path, sorted, with
	// those of deletes still in its trash.
	versions map[string][]string
	// stuck: deletes in history's trash (a slot with a tree), and
	// other leftovers.
	stuck []string
	// access: the access index, in Unix seconds.
	access map[string]int64
	// emptySlots: trash slots without a tree. Not checked: a lost
	// answer to the Mkdir of a slot, or a failed removal of a file
	// delete's slot once emptied, leaves one that no sweep removes (it
	// cannot be told from a slot whose delete is about to move its tree
	// in). It is hidden and holds no content.
	emptySlots int
	problems   []string
}

const tombstoneStart = "\x00memtool-history:"

func takeSnapshot(t *testing.T, base memtool.Store) snapshot {
	t.Helper()
	ctx := context.Background()
	es, err := encrypt.New(base, sweepKeys, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{tree: map[string]string{}, versions: map[string][]string{}}
	read := func(name string) string {
		data, err := es.ReadFile(ctx, name, 1<<30)
		if err != nil {
			return fmt.Sprintf("<unreadable: %v>", err)
		}
		if strings.HasPrefix(string(data), tombstoneStart) {
			return "<tombstone>"
		}
		return string(data)
	}
	err = memtool.Walk(ctx, es, "", func(name string, fi memtool.FileInfo) error {
		switch {
		case name == "":
		case strings.HasPrefix(name, ".memtool"):
			return fs.SkipDir
		case fi.IsDir():
			s.tree[name+"/"] = ""
		default:
			s.tree[name] = read(name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Expired files, as "!trash/<batch>/<path>".
	err = memtool.Walk(ctx, es, expiry.TrashName, func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() {
			s.tree["!trash"+strings.TrimPrefix(name, expiry.TrashName)] = read(name)
		}
		return nil
	})
	if err != nil && !errors.Is(err, memtool.ErrNotExist) {
		t.Fatal(err)
	}
	// The access index must stay readable.
	if data, err := es.ReadFile(ctx, expiry.IndexName, 1<<30); err == nil {
		var ix struct{ Access map[string]int64 }
		if err := json.Unmarshal(data, &ix); err != nil {
			s.problems = append(s.problems, fmt.Sprintf("the access index does not parse: %v", err))
		}
		s.access = ix.Access
	} else if !errors.Is(err, memtool.ErrNotExist) {
		s.problems = append(s.problems, fmt.Sprintf("the access index: %v", err))
	}
	// History: one directory per path, and the trash.
	dirs, err := es.ReadDir(ctx, history.DirName)
	if err != nil && !errors.Is(err, memtool.ErrNotExist) {
		t.Fatal(err)
	}
	for _, d := range dirs {
		dir := path.Join(history.DirName, d.Name)
		if d.Name == "trash" {
			s.readTrash(t, es, dir, read)
			continue
		}
		p := read(path.Join(dir, "path"))
		entries, err := es.ReadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch {
			case e.Name == "path" || e.Name == "counter":
			case isVersionName(e.Name):
				s.versions[p] = append(s.versions[p], read(path.Join(dir, e.Name)))
			default:
				s.stuck = append(s.stuck, path.Join(dir, e.Name))
			}
		}
	}
	for _, vs := range s.versions {
		slices.Sort(vs)
	}
	return s
}

func (s *snapshot) readTrash(t *testing.T, es memtool.Store, trash string, read func(string) string) {
	ctx := context.Background()
	slots, err := es.ReadDir(ctx, trash)
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range slots {
		dir := path.Join(trash, slot.Name)
		tree := path.Join(dir, "tree")
		if _, err := es.Stat(ctx, tree); errors.Is(err, memtool.ErrNotExist) {
			s.emptySlots++
			continue
		}
		s.stuck = append(s.stuck, dir)
		p := read(path.Join(dir, "path"))
		err := memtool.Walk(ctx, es, tree, func(name string, fi memtool.FileInfo) error {
			if fi.IsRegular() {
				orig := p + strings.TrimPrefix(name, tree)
				s.versions[orig] = append(s.versions[orig], read(name))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func isVersionName(name string) bool {
	parts := strings.SplitN(name, "-", 3)
	return len(parts) == 3 && parts[0] != "" && strings.Trim(parts[0]+parts[1], "0123456789") == ""
}

func (s snapshot) same(o snapshot) bool {
	return maps.Equal(s.tree, o.tree) && maps.EqualFunc(s.versions, o.versions, slices.Equal)
}

// sameUnpruned reports whether s is o, but for versions that o pruned
// and s still has from before: pruning follows a change that has
// succeeded, and its failure goes to history's OnError, as does a
// change's whose answer was lost (it keeps its version, and does not
// prune). The next change prunes them.
func (s snapshot) sameUnpruned(o, before snapshot) bool {
	if !maps.Equal(s.tree, o.tree) {
		return false
	}
	for p, vs := range s.versions {
		extra := slices.Clone(vs)
		for _, v := range o.versions[p] {
			i := slices.Index(extra, v)
			if i < 0 {
				return false
			}
			extra = slices.Delete(extra, i, i+1)
		}
		for _, v := range extra {
			if !slices.Contains(before.versions[p], v) {
				return false
			}
		}
	}
	for p := range o.versions {
		if _, ok := s.versions[p]; !ok {
			return false
		}
	}
	return true
}

// withoutNewEmptyDirs returns s without the empty directories that are
// in after and not in before: the parents that memtool.MkdirAll made
// for a change whose Mkdir answer was lost, which it cannot tell from
// one another process made, and so leaves.
func (s snapshot) withoutNewEmptyDirs(before, after snapshot) snapshot {
	out := s
	out.tree = maps.Clone(s.tree)
	for removed := true; removed; {
		removed = false
		for k := range out.tree {
			_, old := before.tree[k]
			_, made := after.tree[k]
			if !strings.HasSuffix(k, "/") || old || !made {
				continue
			}
			empty := true
			for o := range out.tree {
				if o != k && strings.HasPrefix(o, k) {
					empty = false
				}
			}
			if empty {
				delete(out.tree, k)
				removed = true
			}
		}
	}
	return out
}

func (s snapshot) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s.tree)) {
		fmt.Fprintf(&b, "  %s %q\n", k, s.tree[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.versions)) {
		fmt.Fprintf(&b, "  versions of %s: %q\n", k, s.versions[k])
	}
	if len(s.stuck) > 0 {
		fmt.Fprintf(&b, "  left: %v\n", s.stuck)
	}
	return b.String()
}

// partOf reports whether s is made of before and after: each entry as in
// one of them, and no text lost (each file of before is still a file
// or a version somewhere). It is what a documented non-atomic fallback
// may leave.
func (s snapshot) partOf(before, after snapshot) bool {
	for k, v := range s.tree {
		if b, ok := before.tree[k]; ok && b == v {
			continue
		}
		if a, ok := after.tree[k]; ok && a == v {
			continue
		}
		return false
	}
	kept := map[string]bool{}
	for _, v := range s.tree {
		kept[v] = true
	}
	for _, vs := range s.versions {
		for _, v := range vs {
			kept[v] = true
		}
	}
	for k, v := range before.tree {
		if !strings.HasSuffix(k, "/") && !kept[v] {
			return false
		}
	}
	return true
}

// outcome classifies a result as the model reads it.
func outcome(res memtool.Result) string {
	switch {
	case !res.IsError:
		return "ok"
	case strings.Contains(res.Text, "may or may not have been made"):
		return "unknown"
	}
	return "error"
}

// A faultBase is a real store the sweep runs over. The memory the
// scenarios start from is made once per scenario, in a directory, and
// copied for each run.
type faultBase struct {
	name string
	// open opens the store in dir; close closes it.
	open func(t *testing.T, dir string) (s memtool.Store, close func())
	// inMemory: the store keeps nothing in dir; each run makes the
	// memory again.
	inMemory bool
	// modes: the faults swept. The file and database stores cost a
	// thousand times more a run, and the policies above them do the
	// same as over memstore: only lost answers are swept there, and over the
	// database (slow under the race detector) only the scenarios of
	// only, if set. -short sweeps the in-memory stores alone.
	modes []faultMode
	only  []string
}

var allModes = []faultMode{failBefore, loseAnswer, failAfterFn, cancel}

func faultBases() []faultBase {
	return []faultBase{
		{name: "memstore", inMemory: true, modes: allModes, open: func(*testing.T, string) (memtool.Store, func()) {
			return memstore.New(), func() {}
		}},
		// Without Renamer and RemoveAller, as an object store: history
		// deletes through tombstones, Memory and expiry move by copying.
		{name: "memstore-norename", inMemory: true, modes: allModes, open: func(*testing.T, string) (memtool.Store, func()) {
			return struct{ memtool.Store }{memstore.New()}, func() {}
		}},
		{name: "filestore", modes: []faultMode{loseAnswer}, open: func(t *testing.T, dir string) (memtool.Store, func()) {
			s, err := filestore.Open(dir, &filestore.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			return s, func() { s.Close() }
		}},
		{name: "sqlitestore", modes: []faultMode{loseAnswer}, only: []string{"str_replace", "delete tree", "rename dir", "revert deleted"}, open: func(t *testing.T, dir string) (memtool.Store, func()) {
			s, err := sqlitestore.Open(filepath.Join(dir, "m.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, func() { s.Close() }
		}},
	}
}

// A faultRun is one scenario's command run with a fault armed.
type faultRun struct {
	res       memtool.Result
	seen      int
	hit       string
	before    snapshot
	after     snapshot
	followups []string // failures of the commands after it
}

// sweepFixture makes the memory each run of a scenario starts from.
type sweepFixture struct {
	base     faultBase
	sc       faultScenario
	template string // the directory made once, copied for each run
	runs     string // where the runs' copies go
}

func newSweepFixture(t *testing.T, b faultBase, sc faultScenario) *sweepFixture {
	f := &sweepFixture{base: b, sc: sc, runs: t.TempDir()}
	if !b.inMemory {
		f.template = t.TempDir()
		s, closeStore := b.open(t, f.template)
		f.setup(t, s)
		closeStore()
	}
	return f
}

func (f *sweepFixture) opts(now func() time.Time) stackOptions {
	h := history.Options{Now: now}
	if f.sc.history != nil {
		h = *f.sc.history
		h.Now = now
	}
	return stackOptions{keys: sweepKeys, limits: f.sc.limits, history: &h, expiry: &expiry.Options{Now: now}}
}

func (f *sweepFixture) setup(t *testing.T, s memtool.Store) {
	st := newStack(t, s, f.opts(setupClock))
	for _, c := range setupCommands {
		st.mustRun(t, c)
	}
	if f.sc.prepare != nil {
		f.sc.prepare(t, st)
	}
}

// open returns a new copy of the memory the scenario starts from.
func (f *sweepFixture) open(t *testing.T) (memtool.Store, func()) {
	if f.base.inMemory {
		s, closeStore := f.base.open(t, "")
		f.setup(t, s)
		return s, closeStore
	}
	dir, err := os.MkdirTemp(f.runs, "run")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(f.template)); err != nil {
		t.Fatal(err)
	}
	s, closeStore := f.base.open(t, dir)
	return s, func() {
		closeStore()
		os.RemoveAll(dir)
	}
}

func (f *sweepFixture) run(t *testing.T, mode faultMode, at int) faultRun {
	t.Helper()
	base, closeBase := f.open(t)
	defer closeBase()
	var r faultRun
	r.before = takeSnapshot(t, base)
	fault := newFaultStore(base)
	st := newStack(t, fault, f.opts(runClock))
	mem := memtool.New(st.top, &memtool.Options{Logger: slog.New(slog.DiscardHandler), Overwrite: f.sc.overwrite})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	fault.stop = stop
	fault.arm(mode, at)
	if f.sc.op != nil {
		r.res = opResult(f.sc.op(ctx, st))
	} else {
		in, err := json.Marshal(f.sc.cmd)
		if err != nil {
			t.Fatal(err)
		}
		r.res = mem.Run(ctx, in)
	}
	r.seen, r.hit = fault.disarm()
	r.after = takeSnapshot(t, base)
	// The next commands work through the same stack: no lock is left
	// held, no marker left in the way.
	for _, c := range []map[string]any{
		create("/memories/zz/next.md", "next\n"),
		strReplace("/memories/zz/next.md", "next", "then"),
		{"command": "view", "path": "/memories"},
		{"command": "delete", "path": "/memories/zz"},
		create("/memories/notes.md", "again\n"), // may exist: only a busy answer is wrong
	} {
		in, _ := json.Marshal(c)
		res := mem.Run(context.Background(), in)
		if res.IsError && !strings.Contains(res.Text, "already exists") {
			r.followups = append(r.followups, fmt.Sprintf("%v: %s", c, res.Text))
		}
	}
	final := takeSnapshot(t, base)
	if len(final.stuck) > 0 {
		r.followups = append(r.followups, fmt.Sprintf("left after the next delete: %v", final.stuck))
	}
	r.followups = append(r.followups, final.problems...)
	return r
}

// staleAccess says which file of got that is new or changed since
// before the access index holds an access for from before the run: the
// next Collect would take it for unused since then. (No access at all
// is safe: such a file counts as used at the next Collect.)
func staleAccess(before, got snapshot) string {
	for k, v := range got.tree {
		if strings.HasSuffix(k, "/") || strings.HasPrefix(k, "!trash/") {
			continue
		}
		if old, ok := before.tree[k]; ok && old == v {
			continue
		}
		if t, ok := got.access[k]; ok && t < runClock().Unix() {
			return fmt.Sprintf("%s is new or changed, but its last access is recorded as %v", k, time.Unix(t, 0).UTC())
		}
	}
	return ""
}

// opResult is a management operation's error as a command's result.
func opResult(err error) memtool.Result {
	switch {
	case err == nil:
		return memtool.Result{Text: "ok"}
	case errors.Is(err, memtool.ErrOutcomeUnknown):
		return memtool.Result{Text: "may or may not have been made: " + err.Error(), IsError: true}
	}
	return memtool.Result{Text: err.Error(), IsError: true}
}

func TestFaultSweep(t *testing.T) {
	for _, b := range faultBases() {
		if testing.Short() && !b.inMemory {
			continue
		}
		for _, sc := range faultScenarios() {
			if b.only != nil && !slices.Contains(b.only, sc.name) {
				continue
			}
			t.Run(b.name+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				f := newSweepFixture(t, b, sc)
				ref := f.run(t, failBefore, 0)
				if len(ref.followups) > 0 {
					t.Fatalf("without a fault, the next commands: %q", ref.followups)
				}
				checkReference(t, sc, ref)
				probe, closeProbe := b.open(t, t.TempDir())
				atomic := !sc.partial && (!sc.fallback || memtool.Has[memtool.Renamer](probe) && memtool.Has[memtool.RemoveAller](probe))
				closeProbe()
				for _, mode := range b.modes {
					fired := 0
					for at := 1; ; at++ {
						r := f.run(t, mode, at)
						if r.hit == "" {
							// Every command makes a call, and one that
							// changes the store a change: a sweep that
							// failed none checked nothing.
							if fired == 0 && (mode == failBefore || mode == cancel || mode == loseAnswer && !ref.after.same(ref.before)) {
								t.Errorf("%s: no fault fired", mode)
							}
							break
						}
						fired++
						checkFaultRun(t, fmt.Sprintf("%s fault at %s", mode, r.hit), sc, ref, r, atomic)
						if at > 1000 {
							t.Fatal("no end of calls")
						}
					}
				}
			})
		}
	}
}

func checkFaultRun(t *testing.T, what string, sc faultScenario, ref, r faultRun, atomic bool) {
	t.Helper()
	before, want, got := ref.before, ref.after, r.after
	out := outcome(r.res)
	bad := func(format string, args ...any) {
		t.Errorf("%s: answered %s (%q):\n"+format+"\nbefore:\n%s\nwithout the fault:\n%s\ngot:\n%s",
			append(append([]any{what, out, r.res.Text}, args...), before, want, got)...)
	}
	switch {
	case len(got.problems) > 0:
		bad("problems: %q", got.problems)
	case !r.before.same(before):
		bad("the runs started from different memories:\n%s", r.before)
	case out == "ok" && ref.res.IsError:
		bad("succeeded where the run without a fault failed: %q", ref.res.Text)
	case staleAccess(before, got) != "":
		bad("%s", staleAccess(before, got))
	case out == "ok" && r.res.Text != ref.res.Text && !sc.partialView:
		bad("answer differs from the run without a fault: %q", ref.res.Text)
	case out == "ok" && !got.sameUnpruned(want, before):
		bad("succeeded, but the store is not as without the fault")
	case out == "error" && !got.same(before) && (atomic || !got.partOf(before, want)):
		bad("failed, but the store changed")
	case out == "unknown" && !got.same(before) && !got.withoutNewEmptyDirs(before, want).same(before) && !got.sameUnpruned(want, before) && (atomic || !got.partOf(before, want)):
		bad("outcome unknown, but the store is neither as before nor as after")
	}
	if len(r.followups) > 0 {
		t.Errorf("%s: answered %s (%q); then: %q", what, out, r.res.Text, r.followups)
	}
}
