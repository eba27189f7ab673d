//go:build linux

package filestore_test

// Faults of the host, made for real: a full tmpfs, a tmpfs remounted
// read-only, debris the store cannot remove, directories this process may
// not read, a lock file deleted under running writers and a lock another
// process holds. Tests that need root (mount, chattr, another user) skip
// with a message when not root, and fail under CI=true, which runs as root.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/storetest"
)

// fillDisk writes a file in mnt until the file system is full and returns
// its name.
func fillDisk(t *testing.T, mnt string) string {
	t.Helper()
	name := filepath.Join(mnt, "fill")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 1024 {
		_, err = f.Write(make([]byte, 1<<20))
		if err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling %s: %v, want ENOSPC", mnt, err)
	}
	// Check that not one byte more fits.
	probe := filepath.Join(mnt, "probe")
	if err := os.WriteFile(probe, []byte("x"), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the disk is not full: writing one byte: %v", err)
	}
	os.Remove(probe)
	return name
}

// debrisIn lists the store's temp and trash names anywhere under dir.
func debrisIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), ".memtool-tmp-") || strings.HasPrefix(d.Name(), ".memtool-trash-")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// run runs one tool input and checks the model's text: want as a prefix,
// and never the host path hostDir.
func run(t *testing.T, mem *memtool.Memory, hostDir, input, want string) {
	t.Helper()
	r := mem.Run(t.Context(), []byte(input))
	if len(input) > 120 {
		input = input[:120] + "…"
	}
	if !strings.HasPrefix(r.Text, want) || r.IsError != strings.HasPrefix(want, "Error: ") {
		t.Errorf("%s\n got %q (is_error %v)\nwant %q…", input, r.Text, r.IsError, want)
	}
	if strings.Contains(r.Text, hostDir) {
		t.Errorf("%s: the model's text holds the host path: %q", input, r.Text)
	}
}

// quietMemory is a Memory whose log of internal errors goes to the test log.
func quietMemory(t *testing.T, s memtool.Store) *memtool.Memory {
	return memtool.New(s, &memtool.Options{Logger: testLogger(t, nil)})
}

// testLogger logs to t.Log, and records each message in *msgs if not nil.
func testLogger(t *testing.T, msgs *logRecords) *slog.Logger {
	return slog.New(&recordingHandler{t: t, msgs: msgs})
}

type logRecords struct {
	mu   sync.Mutex
	list []string
}

func (r *logRecords) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.list, "\n")
}

type recordingHandler struct {
	t     *testing.T
	msgs  *logRecords
	attrs []slog.Attr
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	sb.WriteString(r.Level.String() + " " + r.Message)
	for _, a := range h.attrs {
		sb.WriteString(" " + a.String())
	}
	r.Attrs(func(a slog.Attr) bool { sb.WriteString(" " + a.String()); return true })
	h.t.Log(sb.String())
	if h.msgs != nil {
		h.msgs.mu.Lock()
		h.msgs.list = append(h.msgs.list, sb.String())
		h.msgs.mu.Unlock()
	}
	return nil
}

func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordingHandler{t: h.t, msgs: h.msgs, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// ---- debris ----

// makeUnremovable makes name impossible for this process to remove: as
// root, by marking the file immutable (chattr +i); otherwise by taking the
// write permission from its directory. The test's cleanup undoes it.
func makeUnremovable(t *testing.T, name string) {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := filepath.Dir(name)
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	setImmutable(t, name, true)
	t.Cleanup(func() { setImmutable(t, name, false) })
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (chattr +i).
const fsImmutableFL = 0x10

func setImmutable(t *testing.T, name string, on bool) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Fatalf("FS_IOC_GETFLAGS on %s: %v", name, err)
	}
	if on {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	v := int(flags)
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, v); err != nil {
		t.Fatalf("chattr %s: %v", name, err)
	}
}

// A crash mark plus debris the store cannot remove (immutable, or in a
// directory it may not write) does not stop Open: the sweep removes what it
// can, logs what it cannot, clears the mark (the next Open does not walk
// again) and the store works.
func TestOpenWithDebrisItCannotRemove(t *testing.T) {
	dir := t.TempDir()
	stuck := filepath.Join(dir, "d", ".memtool-trash-stuck", "f")
	writeHostFile(t, stuck, "debris")
	writeHostFile(t, filepath.Join(dir, ".memtool-tmp-removable"), "debris")
	writeHostFile(t, filepath.Join(dir, "d", "keep.txt"), "kept")
	writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "pid 1 writing\n")
	makeUnremovable(t, stuck)

	var logs logRecords
	s, err := filestore.Open(dir, &filestore.Options{Logger: testLogger(t, &logs)})
	if err != nil {
		t.Fatalf("Open with unremovable debris: %v", err)
	}
	defer s.Close()
	if got := debrisIn(t, dir); !slices.Equal(got, []string{filepath.Join(dir, "d", ".memtool-trash-stuck")}) {
		t.Errorf("debris after Open = %q, want only the unremovable trash", got)
	}
	if !strings.Contains(logs.all(), ".memtool-trash-stuck") {
		t.Errorf("the log does not name the debris left behind: %q", logs.all())
	}
	ctx := t.Context()
	if data, err := s.ReadFile(ctx, "d/keep.txt", 100); err != nil || string(data) != "kept" {
		t.Errorf("ReadFile(d/keep.txt) = %q, %v", data, err)
	}
	if err := s.WriteFile(ctx, "d/new.txt", []byte("new"), memtool.CreateOnly); err != nil {
		t.Errorf("WriteFile after Open: %v", err)
	}
	if entries, err := s.ReadDir(ctx, "d"); err != nil || !slices.Equal(names(entries), []string{"keep.txt", "new.txt"}) {
		t.Errorf("ReadDir(d) = %v, %v", names(entries), err)
	}

	// The mark is gone: new debris stays until the next crash (or Sweep).
	writeHostFile(t, filepath.Join(dir, ".memtool-tmp-later"), "debris")
	s2 := open(t, dir, &filestore.Options{Logger: testLogger(t, nil)})
	if _, err := os.Lstat(filepath.Join(dir, ".memtool-tmp-later")); err != nil {
		t.Errorf("a second Open walked the tree again: %v", err)
	}
	// Sweep removes what it can and says what it could not.
	err = s2.Sweep(ctx)
	if err == nil || !strings.Contains(err.Error(), ".memtool-trash-stuck") {
		t.Errorf("Sweep = %v, want an error naming the unremovable trash", err)
	}
	if got := debrisIn(t, dir); len(got) != 1 {
		t.Errorf("debris after Sweep = %q, want only the unremovable trash", got)
	}
}

// ---- full disk ----

// On a full disk, commands that need space fail with ErrNoSpace and leave
// nothing behind; delete and rename, which need none, work; after space is
// freed everything works. The model is told the disk is full, with no host
// path.
func TestFullDisk(t *testing.T) {
	mnt := hostfault.Tmpfs(t, "size=512k,mode=0755")
	dir := filepath.Join(mnt, "store")
	// A store that was written before the disk filled, and one first
	// opened on the full disk, never written.
	s := open(t, dir, nil)
	ctx := t.Context()
	for _, name := range []string{"a.txt", "keep.txt", "d/b.txt", "d/c.txt", "e/x.txt"} {
		writeHostFile(t, filepath.Join(dir, name), "content of "+name)
	}
	if err := s.WriteFile(ctx, "used.txt", []byte("in use"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(mnt, "late")
	writeHostFile(t, filepath.Join(late, "gone.txt"), "to delete")
	writeHostFile(t, filepath.Join(late, "moved.txt"), "to rename")
	if got := hostContent(t, filepath.Join(dir, ".memtool.lock")); got != "clean\n" {
		t.Errorf("the lock file after a write = %q, want its clean mark (bytes for later marks)", got)
	}
	fill := fillDisk(t, mnt)
	sLate := open(t, late, nil)
	if data, err := os.ReadFile(filepath.Join(late, ".memtool.lock")); err == nil && len(data) > 0 {
		t.Fatalf("the lock file of a store opened on a full disk holds %q: this test no longer checks a writer without a mark", data)
	}
	mem := quietMemory(t, s)
	memLate := quietMemory(t, sLate)

	big := bytes.Repeat([]byte("x"), 64<<10)
	for call, err := range map[string]error{
		"WriteFile(new.txt, CreateOnly)": s.WriteFile(ctx, "new.txt", big, memtool.CreateOnly),
		"WriteFile(keep.txt, Replace)":   s.WriteFile(ctx, "keep.txt", big, memtool.Replace),
		"Update(keep.txt)":               s.Update(ctx, "keep.txt", 1<<20, func(old []byte) ([]byte, error) { return append(old, big...), nil }),
	} {
		storetest.WantErr(t, call, err, memtool.ErrNoSpace)
		noHostPath(t, call, err, mnt)
	}
	run(t, mem, mnt, `{"command":"create","path":"/memories/f/new.txt","file_text":"`+strings.Repeat("y", 8192)+`"}`,
		"Error: No space left in the memory store; the create command on /memories/f/new.txt changed nothing")
	run(t, mem, mnt, `{"command":"str_replace","path":"/memories/keep.txt","old_str":"content","new_str":"`+strings.Repeat("z", 8192)+`"}`,
		"Error: No space left in the memory store")
	if got := hostContent(t, filepath.Join(dir, "keep.txt")); got != "content of keep.txt" {
		t.Errorf("keep.txt = %q after failed writes", got)
	}
	for _, name := range []string{"new.txt", "f"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a failed create left %s behind (%v)", name, err)
		}
	}
	if got := debrisIn(t, mnt); len(got) > 0 {
		t.Errorf("failed writes left debris: %q", got)
	}

	// What needs no space works, on both stores.
	run(t, mem, mnt, `{"command":"view","path":"/memories"}`, "Here're the files")
	run(t, mem, mnt, `{"command":"delete","path":"/memories/a.txt"}`, "Successfully deleted /memories/a.txt")
	run(t, mem, mnt, `{"command":"delete","path":"/memories/d"}`, "Successfully deleted /memories/d")
	run(t, mem, mnt, `{"command":"rename","old_path":"/memories/keep.txt","new_path":"/memories/e/kept.txt"}`, "Successfully renamed")
	if err := s.Remove(ctx, "e/x.txt"); err != nil {
		t.Errorf("Remove(e/x.txt) on a full disk: %v", err)
	}
	run(t, memLate, mnt, `{"command":"delete","path":"/memories/gone.txt"}`, "Successfully deleted /memories/gone.txt")
	run(t, memLate, mnt, `{"command":"rename","old_path":"/memories/moved.txt","new_path":"/memories/sub/moved.txt"}`, "Successfully renamed")
	if got := hostContent(t, filepath.Join(late, "sub", "moved.txt")); got != "to rename" {
		t.Errorf("moved.txt = %q", got)
	}

	// Space freed: everything works again, with the same handles.
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	run(t, mem, mnt, `{"command":"create","path":"/memories/f/new.txt","file_text":"fits now"}`, "File created successfully")
	run(t, mem, mnt, `{"command":"str_replace","path":"/memories/e/kept.txt","old_str":"content","new_str":"text"}`, "The memory file has been edited")
	run(t, memLate, mnt, `{"command":"create","path":"/memories/late.txt","file_text":"fits now"}`, "File created successfully")
	if got := hostContent(t, filepath.Join(dir, "e", "kept.txt")); got != "text of keep.txt" {
		t.Errorf("kept.txt = %q", got)
	}
	if got := debrisIn(t, mnt); len(got) > 0 {
		t.Errorf("debris: %q", got)
	}
}

// noHostPath fails the test if err's text holds the host path dir.
func noHostPath(t *testing.T, call string, err error, dir string) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), dir) {
		t.Errorf("%s: the error holds the host path: %v", call, err)
	}
}

// ---- read-only ----

// On a read-only file system the store opens, whether it was used before,
// never opened, or left with a crash mark; reads work; writes fail with
// ErrReadOnly and change nothing. When the file system is writable again,
// the same handle writes.
func TestReadOnlyFileSystem(t *testing.T) {
	mnt := hostfault.Tmpfs(t, "size=1m,mode=0755")
	used := filepath.Join(mnt, "used")
	writeHostFile(t, filepath.Join(used, "d", "a.txt"), "before")
	s := open(t, used, nil)
	if err := s.Update(t.Context(), "d/a.txt", 100, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fresh := filepath.Join(mnt, "fresh") // never opened: no lock file
	writeHostFile(t, filepath.Join(fresh, "d", "a.txt"), "before")
	crashed := filepath.Join(mnt, "crashed") // a crash mark and debris
	writeHostFile(t, filepath.Join(crashed, "d", "a.txt"), "before")
	writeHostFile(t, filepath.Join(crashed, ".memtool.lock"), "pid 1 writing\n")
	writeHostFile(t, filepath.Join(crashed, "d", ".memtool-tmp-aa"), "debris")
	hostfault.Remount(t, mnt, true)
	t.Cleanup(func() { hostfault.Remount(t, mnt, false) })

	for _, dir := range []string{used, fresh, crashed} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var logs logRecords
			s := open(t, dir, &filestore.Options{Logger: testLogger(t, &logs)})
			checkReadOnly(t, s, mnt)
			if dir == crashed && !strings.Contains(logs.all(), "interrupted") {
				t.Errorf("the crash mark on a read-only store was not logged: %q", logs.all())
			}
		})
	}

	t.Run("writable again", func(t *testing.T) {
		s := open(t, fresh, nil)
		hostfault.Remount(t, mnt, false)
		defer hostfault.Remount(t, mnt, true)
		if err := s.WriteFile(t.Context(), "d/b.txt", []byte("after"), memtool.CreateOnly); err != nil {
			t.Errorf("WriteFile after the remount: %v", err)
		}
		open(t, crashed, nil)
		if got := debrisIn(t, crashed); len(got) > 0 {
			t.Errorf("the first writable Open left the crashed writer's debris: %q", got)
		}
	})
}

// checkReadOnly checks a store that cannot be written: reads work, every
// write fails with ErrReadOnly and changes nothing, and the model is told.
func checkReadOnly(t *testing.T, s *filestore.Store, hostDir string) {
	t.Helper()
	ctx := t.Context()
	if data, err := s.ReadFile(ctx, "d/a.txt", 100); err != nil || string(data) != "before" {
		t.Errorf("ReadFile(d/a.txt) = %q, %v", data, err)
	}
	if entries, err := s.ReadDir(ctx, ""); err != nil || !slices.Equal(names(entries), []string{"d"}) {
		t.Errorf("ReadDir = %q, %v", names(entries), err)
	}
	if fi, err := s.Stat(ctx, "d"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(d) = %+v, %v", fi, err)
	}
	inc := func(old []byte) ([]byte, error) { return append(old, '!'), nil }
	for call, err := range map[string]error{
		"WriteFile(CreateOnly)": s.WriteFile(ctx, "d/new.txt", []byte("x"), memtool.CreateOnly),
		"WriteFile(Replace)":    s.WriteFile(ctx, "d/a.txt", []byte("x"), memtool.Replace),
		"Update":                s.Update(ctx, "d/a.txt", 100, inc),
		"Mkdir":                 s.Mkdir(ctx, "e"),
		"Remove":                s.Remove(ctx, "d/a.txt"),
		"RemoveAll":             s.RemoveAll(ctx, "d"),
		"Rename":                s.Rename(ctx, "d/a.txt", "b.txt"),
	} {
		storetest.WantErr(t, call, err, memtool.ErrReadOnly)
		noHostPath(t, call, err, hostDir)
	}
	mem := quietMemory(t, s)
	run(t, mem, hostDir, `{"command":"view","path":"/memories/d/a.txt"}`, "Here's the content of /memories/d/a.txt")
	run(t, mem, hostDir, `{"command":"view","path":"/memories"}`, "Here're the files")
	run(t, mem, hostDir, `{"command":"create","path":"/memories/x/new.txt","file_text":"x"}`,
		"Error: The memory store is read-only; the create command on /memories/x/new.txt changed nothing")
	run(t, mem, hostDir, `{"command":"delete","path":"/memories/d"}`, "Error: The memory store is read-only")
	if data, err := s.ReadFile(ctx, "d/a.txt", 100); err != nil || string(data) != "before" {
		t.Errorf("d/a.txt = %q, %v after the refused writes", data, err)
	}
}

// ---- permissions (another user) ----

// nobodyStoreEnv passes the store's directory from a test to its child.
const nobodyStoreEnv = "FILESTORE_TEST_NOBODY_STORE"

// asNobody makes a store directory with setup and returns it with true
// when the test's body should run on it here: in a process that is not
// root, and in the child that a root process starts, as the user nobody,
// for the calling test alone, so that file permissions apply to it. The
// root process reports the child's result and gets false.
func asNobody(t *testing.T, setup func(dir string)) (dir string, here bool) {
	t.Helper()
	if dir := os.Getenv(nobodyStoreEnv); dir != "" {
		return dir, true
	}
	dir = filepath.Join(publicDir(t), "store")
	setup(dir)
	if os.Geteuid() != 0 {
		return dir, true
	}
	uid, gid := uint32(65534), uint32(65534)
	if u, err := user.Lookup("nobody"); err == nil {
		if n, err := strconv.Atoi(u.Uid); err == nil {
			uid = uint32(n)
		}
		if n, err := strconv.Atoi(u.Gid); err == nil {
			gid = uint32(n)
		}
	}
	// The test binary sits in a directory only root may enter: copy it.
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(publicDir(t), "filestore.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), nobodyStoreEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", uid, out)
	if err != nil {
		t.Errorf("the test as uid %d failed: %v", uid, err)
	} else if !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Errorf("the test as uid %d did not pass", uid)
	}
	return "", false
}

// publicDir makes a temporary directory that every user may enter.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "filestore-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chownTree gives every entry under dir to the user asNobody runs as, so
// that only the modes the test sets keep it out.
func chownTree(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	uid, gid := 65534, 65534
	if u, err := user.Lookup("nobody"); err == nil {
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A directory this process may not read and search (mode 000, or 0400) is
// reported as irregular by Stat and ReadDir; the rest of the listing works,
// and the model's view of the store lists everything else.
func TestUnreadableDirectory(t *testing.T) {
	dir, here := asNobody(t, func(dir string) {
		writeHostFile(t, filepath.Join(dir, "ok", "a.txt"), "readable")
		writeHostFile(t, filepath.Join(dir, "b.txt"), "readable")
		writeHostFile(t, filepath.Join(dir, "secret", "x.txt"), "hidden")
		writeHostFile(t, filepath.Join(dir, "noexec", "y.txt"), "hidden")
		writeHostFile(t, filepath.Join(dir, "locked.txt"), "unreadable")
		if err := os.Symlink("secret", filepath.Join(dir, "secretlink")); err != nil {
			t.Fatal(err)
		}
		chownTree(t, dir)
		for name, mode := range map[string]fs.FileMode{"secret": 0, "noexec": 0o400, "locked.txt": 0} {
			if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(filepath.Join(dir, name), 0o700) })
		}
	})
	if !here {
		return
	}
	s := open(t, dir, &filestore.Options{Logger: testLogger(t, nil)})
	ctx := t.Context()
	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatalf("ReadDir(\"\"): %v", err)
	}
	want := []memtool.FileInfo{
		{Name: "b.txt", Size: 8},
		{Name: "locked.txt", Size: 10},
		{Name: "noexec", Type: fs.ModeIrregular},
		{Name: "ok", Type: fs.ModeDir},
		{Name: "secret", Type: fs.ModeIrregular},
		{Name: "secretlink", Type: fs.ModeIrregular},
	}
	slices.SortFunc(entries, func(a, b memtool.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(entries, want) {
		t.Errorf("ReadDir(\"\") = %+v\nwant %+v", entries, want)
	}
	for _, name := range []string{"secret", "noexec", "secretlink"} {
		if fi, err := s.Stat(ctx, name); err != nil || fi.Type != fs.ModeIrregular {
			t.Errorf("Stat(%s) = %+v, %v; want irregular", name, fi, err)
		}
	}
	// A directory that can be read but not searched: its names, as irregular.
	entries, err = s.ReadDir(ctx, "noexec")
	if err != nil || !slices.Equal(entries, []memtool.FileInfo{{Name: "y.txt", Type: fs.ModeIrregular}}) {
		t.Errorf("ReadDir(noexec) = %+v, %v; want y.txt, irregular", entries, err)
	}
	// Reading one as a file says what Stat says: irregular, not a
	// directory (which a view would go on to list).
	for _, name := range []string{"secret", "noexec", "secretlink"} {
		_, err := s.ReadFile(ctx, name, 1<<20)
		storetest.WantErr(t, "ReadFile("+name+")", err, memtool.ErrIrregular)
		_, _, err = s.OpenFile(ctx, name, 1<<20)
		storetest.WantErr(t, "OpenFile("+name+")", err, memtool.ErrIrregular)
		err = s.Update(ctx, name, 1<<20, func(b []byte) ([]byte, error) { return b, nil })
		storetest.WantErr(t, "Update("+name+")", err, memtool.ErrIrregular)
	}
	_, err = s.ReadFile(ctx, "ok", 1<<20)
	storetest.WantErr(t, "ReadFile(ok)", err, memtool.ErrIsDir)
	mem := quietMemory(t, s)
	run(t, mem, dir, `{"command":"view","path":"/memories"}`,
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n8B\t/memories/b.txt\n10B\t/memories/locked.txt\n4K\t/memories/ok/\n8B\t/memories/ok/a.txt")
	run(t, mem, dir, `{"command":"view","path":"/memories/ok"}`,
		"Here're the files and directories up to 2 levels deep in /memories/ok, excluding hidden items and node_modules:\n4K\t/memories/ok\n8B\t/memories/ok/a.txt")
	run(t, mem, dir, `{"command":"view","path":"/memories/noexec"}`, "Error: Unsupported file type for /memories/noexec")
	run(t, mem, dir, `{"command":"view","path":"/memories/secretlink"}`, "Error: Unsupported file type for /memories/secretlink")
	// A file it may not read: that one view fails, as an internal error.
	run(t, mem, dir, `{"command":"view","path":"/memories/locked.txt"}`, "Error: Internal error while running view on /memories/locked.txt")
	run(t, mem, dir, `{"command":"view","path":"/memories/secret"}`, "Error: Unsupported file type for /memories/secret")
	run(t, mem, dir, `{"command":"view","path":"/memories/ok/a.txt"}`, "Here's the content of /memories/ok/a.txt")
}

// A store directory this process may not write opens; reads work and writes
// fail with ErrReadOnly.
func TestUnwritableStoreDirectory(t *testing.T) {
	dir, here := asNobody(t, func(dir string) {
		writeHostFile(t, filepath.Join(dir, "d", "a.txt"), "before")
		for _, p := range []string{dir, filepath.Join(dir, "d")} {
			if err := os.Chmod(p, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(p, 0o700) })
		}
		if err := os.Chmod(filepath.Join(dir, "d", "a.txt"), 0o444); err != nil {
			t.Fatal(err)
		}
	})
	if !here {
		return
	}
	s := open(t, dir, &filestore.Options{Logger: testLogger(t, nil)})
	checkReadOnly(t, s, dir)
}

// ---- locking ----

// Deleting the lock file while writers work loses no update: each
// increment opens its own store, as a separate process does.
func TestLockSurvivesDeletedLockFile(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	if err := s.WriteFile(t.Context(), "counter", []byte("0"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	workers, per := 4, 40
	if testing.Short() {
		per = 15
	}
	var writers, deleter sync.WaitGroup
	done := make(chan struct{})
	deleted := 0
	deleter.Go(func() {
		for deleted < 100000 {
			select {
			case <-done:
				return
			default:
			}
			if os.Remove(filepath.Join(dir, ".memtool.lock")) == nil {
				deleted++
			}
			time.Sleep(50 * time.Microsecond)
		}
	})
	errs := make(chan error, workers)
	for range workers {
		writers.Go(func() {
			for range per {
				w, err := filestore.Open(dir, nil)
				if err != nil {
					errs <- err
					return
				}
				err = w.Update(context.Background(), "counter", 100, func(old []byte) ([]byte, error) {
					n, err := strconv.Atoi(string(old))
					if err != nil {
						return nil, err
					}
					return strconv.AppendInt(nil, int64(n+1), 10), nil
				})
				w.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	writers.Wait()
	close(done)
	deleter.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, err := s.ReadFile(t.Context(), "counter", 100)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := strconv.Atoi(string(data))
	t.Logf("lock file deleted %d times; counter %d of %d", deleted, got, workers*per)
	if deleted == 0 {
		t.Errorf("the lock file was never deleted: this test checked nothing")
	}
	if err := s.WriteFile(t.Context(), "after", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".memtool.lock")); err != nil {
		t.Errorf("the next writer did not create the lock file again: %v", err)
	}
	if got != workers*per {
		t.Errorf("counter = %d, want %d: %d updates lost", got, workers*per, workers*per-got)
	}
}

// holdLock holds the store's write lock through a second store (as another
// process would) until the returned release is called; released is closed
// when the holder let go. A watchdog releases it after a minute, so that a
// store that waits forever fails the test instead of hanging it.
func holdLock(t *testing.T, dir string) (release func(), released <-chan struct{}) {
	t.Helper()
	holder := open(t, dir, nil)
	if err := holder.WriteFile(t.Context(), "held", nil, memtool.Replace); err != nil {
		t.Fatal(err)
	}
	inside := make(chan struct{})
	free := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(free) }) }
	watchdog := time.AfterFunc(time.Minute, release)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errc <- holder.Update(context.Background(), "held", 100, func(old []byte) ([]byte, error) {
			close(inside)
			<-free
			return old, nil
		})
	}()
	<-inside
	t.Cleanup(func() {
		release()
		watchdog.Stop()
		if err := <-errc; err != nil {
			t.Errorf("the holder's Update: %v", err)
		}
	})
	return release, done
}

// A write lock held by another store makes a write fail with ErrBusy after
// the busy timeout, a cancelled write return context.Canceled, and leaves
// Open and reads working; once released, writes work.
func TestBusyLock(t *testing.T) {
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "a.txt"), "a")
	release, _ := holdLock(t, dir)
	ctx := t.Context()

	s := open(t, dir, &filestore.Options{BusyTimeout: 50 * time.Millisecond})
	storetest.WantErr(t, "WriteFile while locked", s.WriteFile(ctx, "b.txt", []byte("b"), memtool.CreateOnly), memtool.ErrBusy)
	storetest.WantErr(t, "RemoveAll while locked", s.RemoveAll(ctx, "a.txt"), memtool.ErrBusy)
	run(t, quietMemory(t, s), dir, `{"command":"create","path":"/memories/c.txt","file_text":"c"}`,
		"Error: The memory store is busy (another process holds it); the create command on /memories/c.txt changed nothing. Try again")
	if data, err := s.ReadFile(ctx, "a.txt", 100); err != nil || string(data) != "a" {
		t.Errorf("ReadFile while locked = %q, %v", data, err)
	}
	// An older version, which flocks only the lock file, is kept out too.
	if f, err := os.Open(filepath.Join(dir, ".memtool.lock")); err != nil {
		t.Error(err)
	} else {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
			t.Errorf("flock of the lock file while a writer works = %v, want EWOULDBLOCK", err)
		}
		f.Close()
	}

	// A long busy timeout, cut short by the context.
	patient := open(t, dir, &filestore.Options{BusyTimeout: time.Hour})
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	storetest.WantErr(t, "WriteFile with a cancelled context", patient.WriteFile(cctx, "b.txt", []byte("b"), memtool.CreateOnly), context.Canceled)

	release()
	if err := patient.WriteFile(ctx, "b.txt", []byte("b"), memtool.CreateOnly); err != nil {
		t.Errorf("WriteFile after release: %v", err)
	}
	if err := s.RemoveAll(ctx, "a.txt"); err != nil {
		t.Errorf("RemoveAll after release: %v", err)
	}
}

// A store opened while another process holds the lock (its crash mark is
// in the lock file then) opens without waiting, and reads work.
func TestOpenWhileLocked(t *testing.T) {
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "a.txt"), "a")
	_, released := holdLock(t, dir)
	s := open(t, dir, &filestore.Options{BusyTimeout: time.Hour})
	if data, err := s.ReadFile(t.Context(), "a.txt", 100); err != nil || string(data) != "a" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	select {
	case <-released:
		t.Errorf("Open returned only after the holder let go of the lock")
	default:
	}
}

// The flock of an older memtool, on the lock file, and one on the store's
// directory each keep writers out (ErrBusy), and nothing else does.
func TestBusyRawFlock(t *testing.T) {
	for _, target := range []string{".memtool.lock", "."} {
		t.Run(target, func(t *testing.T) {
			dir := t.TempDir()
			// The older memtool made the lock file (Open makes none).
			writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "clean\n")
			s := open(t, dir, &filestore.Options{BusyTimeout: 20 * time.Millisecond})
			f, err := os.Open(filepath.Join(dir, target))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			// A store that waits forever fails the test instead of hanging it.
			watchdog := time.AfterFunc(time.Minute, func() { unix.Flock(fd, unix.LOCK_UN) })
			defer watchdog.Stop()
			storetest.WantErr(t, "WriteFile while flocked", s.WriteFile(t.Context(), "a", nil, memtool.CreateOnly), memtool.ErrBusy)
			if err := unix.Flock(fd, unix.LOCK_UN); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteFile(t.Context(), "a", nil, memtool.CreateOnly); err != nil {
				t.Errorf("WriteFile after unlock: %v", err)
			}
		})
	}
}

// A lock file replaced by a directory does not stop writers: they log that
// they go on without a crash mark, and still exclude one another.
func TestLockFileReplacedByDirectory(t *testing.T) {
	dir := t.TempDir()
	var logs logRecords
	s := open(t, dir, &filestore.Options{Logger: testLogger(t, &logs)})
	if err := s.WriteFile(t.Context(), "first.txt", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err) // it makes the lock file, which is then replaced
	}
	lock := filepath.Join(dir, ".memtool.lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(t.Context(), "a.txt", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatalf("WriteFile with a directory for a lock file: %v", err)
	}
	if !strings.Contains(logs.all(), "lock file cannot be used") {
		t.Errorf("not logged: %q", logs.all())
	}
	release, _ := holdLock(t, dir)
	defer release()
	other := open(t, dir, &filestore.Options{BusyTimeout: 20 * time.Millisecond, Logger: testLogger(t, nil)})
	storetest.WantErr(t, "WriteFile while another writer works", other.WriteFile(t.Context(), "b.txt", nil, memtool.CreateOnly), memtool.ErrBusy)
}

// A lock file that is another name of a memory (a symlink to it, which
// the root would follow, or a second hard link) is never marked: Open's
// recovery would have cut the memory to "clean\n", and every write would
// have written its mark over the memory's first bytes. Writers log that
// they go on without a crash mark, and their writes succeed.
func TestLockFileNeverAMemory(t *testing.T) {
	const memory = "precious user memory, not a lock mark\n"
	for _, tc := range []struct {
		name string
		make func(target, lock string) error
	}{
		{"symlink", func(target, lock string) error { return os.Symlink(filepath.Base(target), lock) }},
		{"hard link", os.Link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			notes := filepath.Join(dir, "notes.md")
			writeHostFile(t, notes, memory)
			if err := tc.make(notes, filepath.Join(dir, ".memtool.lock")); err != nil {
				t.Fatal(err)
			}
			var logs logRecords
			s := open(t, dir, &filestore.Options{Logger: testLogger(t, &logs)})
			ctx := t.Context()
			if err := s.WriteFile(ctx, "a.txt", []byte("a"), memtool.CreateOnly); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			if err := s.Update(ctx, "a.txt", 100, func(b []byte) ([]byte, error) { return append(b, 'b'), nil }); err != nil {
				t.Fatalf("Update: %v", err)
			}
			if err := s.Mkdir(ctx, "d"); err != nil {
				t.Fatalf("Mkdir: %v", err)
			}
			if got := hostContent(t, notes); got != memory {
				t.Errorf("notes.md = %q, want it unchanged", got)
			}
			if !strings.Contains(logs.all(), "lock file cannot be used") {
				t.Errorf("not logged: %q", logs.all())
			}
		})
	}
}

// A FIFO for a lock file is neither waited on nor used: Open answers
// (reading a FIFO's "mark" would wait for a writer that never comes),
// and writes go on without a crash mark.
func TestLockFileFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, ".memtool.lock"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs logRecords
	var s *filestore.Store
	storetest.Answer(t, "Open with a FIFO for a lock file", func() (err error) {
		s, err = filestore.Open(dir, &filestore.Options{Logger: testLogger(t, &logs)})
		return err
	})
	if s == nil {
		t.Fatal("Open failed")
	}
	defer s.Close()
	err := storetest.Answer(t, "WriteFile with a FIFO for a lock file", func() error {
		return s.WriteFile(t.Context(), "a.txt", []byte("a"), memtool.CreateOnly)
	})
	if err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if !strings.Contains(logs.all(), "lock file cannot be used") {
		t.Errorf("not logged: %q", logs.all())
	}
}
