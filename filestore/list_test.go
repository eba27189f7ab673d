package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// listTree lays out a directory with everything a listing meets: files,
// directories two and three deep, hidden names, node_modules, the store's
// own files, a FIFO, a file with two links, links inside and out, a
// directory that may not be read, and non-ASCII names whose UTF-16 order
// is not their byte order.
func listTree(t *testing.T) (dir string, s *filestore.Store) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "memories")
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mem := memtool.New(s, nil)
	for _, p := range []string{"b.md", "a.md", "sub/x.md", "sub/deep/y.md", ".hidden/z.md", "node_modules/m.js", "\U0001F600.md", "é.md", "z/1.md"} {
		if r := mem.Run(context.Background(), fmt.Appendf(nil, `{"command":"create","path":"/memories/%s","file_text":"%s"}`, p, strings.Repeat("x", len(p)*100))); r.IsError {
			t.Fatal(r.Text)
		}
	}
	// Enough names that a listing cut at 400 or 700 characters finds more
	// in the root than it can show, and takes them from ListNames.
	for i := range 40 {
		must.Succeed(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%02d.md", i)), []byte("n"), 0o600))
	}
	outside := filepath.Join(root, "outside.txt")
	must.Succeed(t, os.WriteFile(outside, []byte("secret"), 0o600))
	// U+FF61 passes no path gate, but a store's directory may hold it.
	must.Succeed(t, os.WriteFile(filepath.Join(dir, "\uff61.md"), []byte("w"), 0o600))
	must.Succeed(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must.Succeed(t, os.Link(filepath.Join(dir, "a.md"), filepath.Join(dir, "a2.md")))
	must.Succeed(t, os.Symlink("b.md", filepath.Join(dir, "link-in.md")))
	must.Succeed(t, os.Symlink("sub", filepath.Join(dir, "link-dir")))
	must.Succeed(t, os.Symlink(outside, filepath.Join(dir, "link-out.md")))
	must.Succeed(t, os.Mkdir(filepath.Join(dir, "locked"), 0o000))
	return dir, s
}

// ListNames gives the names of the files and directories ReadDir gives,
// plus those of entries that Stat reports unusable; never the store's
// own, never a FIFO.
func TestListNames(t *testing.T) {
	ctx := context.Background()
	_, s := listTree(t)
	names, err := listNames(ctx, s, "")
	must.Succeed(t, err)
	infos, err := s.ReadDir(ctx, "")
	must.Succeed(t, err)
	for _, fi := range infos {
		if (fi.IsDir() || fi.IsRegular()) && !slices.Contains(names, fi.Name) {
			t.Errorf("ListNames lacks %q, which ReadDir lists", fi.Name)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".memtool") || n == "fifo" {
			t.Errorf("ListNames lists %q", n)
		}
		if !slices.ContainsFunc(infos, func(fi memtool.FileInfo) bool { return fi.Name == n }) {
			if fi, err := s.Stat(ctx, n); err == nil && fi.Type != os.ModeIrregular {
				t.Errorf("ListNames lists %q, which ReadDir leaves out but Stat finds usable (%v)", n, fi)
			}
		}
	}
	if _, err := listNames(ctx, s, "missing"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("ListNames of a missing directory: %v, want ErrNotExist", err)
	}
	if _, err := listNames(ctx, s, "a.md"); !errors.Is(err, memtool.ErrNotDir) {
		t.Errorf("ListNames of a file: %v, want ErrNotDir", err)
	}
	sub, err := listNames(ctx, s, "sub")
	must.Succeed(t, err)
	slices.Sort(sub)
	if !slices.Equal(sub, []string{"deep", "x.md"}) {
		t.Errorf("ListNames(sub) = %q", sub)
	}
	// The reader of other systems (os.File.ReadDir) gives the same names.
	var portable []string
	must.Succeed(t, filestore.ListNamesPortable(ctx, s, "", func(n string) bool {
		portable = append(portable, n)
		return true
	}))
	slices.Sort(names)
	slices.Sort(portable)
	if !slices.Equal(names, portable) {
		t.Errorf("ListNames gives %q, the portable reader %q", names, portable)
	}
}

// listNames collects the names ListNames gives.
func listNames(ctx context.Context, s *filestore.Store, name string) ([]string, error) {
	var names []string
	err := s.ListNames(ctx, name, func(n string) bool {
		names = append(names, n)
		return true
	})
	return names, err
}

// ListNames reads a directory larger than one read of it in several, stops
// as soon as fn returns false, and its names stay valid after fn returns.
func TestListNamesLargeAndStopped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := filestore.Open(dir, nil)
	must.Succeed(t, err)
	defer s.Close()
	// About 3 reads of 64 KiB: 5,000 entries of 40 bytes.
	const n = 5000
	for i := range n {
		must.Succeed(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%06d.md", i)), nil, 0o600))
	}
	names, err := listNames(ctx, s, "")
	must.Succeed(t, err)
	slices.Sort(names)
	if len(names) != n {
		t.Fatalf("ListNames gave %d names, want %d", len(names), n)
	}
	for i, name := range names {
		if want := fmt.Sprintf("note-%06d.md", i); name != want {
			t.Fatalf("name %d is %q after sorting, want %q (a name changed after fn returned?)", i, name, want)
		}
	}
	calls := 0
	must.Succeed(t, s.ListNames(ctx, "", func(string) bool { calls++; return calls < 10 }))
	if calls != 10 {
		t.Errorf("fn was called %d times after it returned false on the 10th", calls)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.ListNames(cancelled, "", func(string) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("ListNames with a cancelled context: %v", err)
	}
}

// A listing through ListNames is the listing through ReadDir, byte for
// byte, whole or cut.
func TestListingByNamesIsListingByReadDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode 000 directory")
	}
	ctx := context.Background()
	_, s := listTree(t)
	if !memtool.Has[memtool.NameLister](s) || memtool.Has[memtool.NameLister](storetest.Bare(s)) {
		t.Fatal("the file store must be a NameLister, the bare one not")
	}
	for _, max := range []int{16000, 700, 520, 400} {
		for _, p := range []string{"/memories", "/memories/sub"} {
			in := fmt.Appendf(nil, `{"command":"view","path":%q}`, p)
			opts := &memtool.Options{MaxViewChars: max}
			got := memtool.New(s, opts).Run(ctx, in)
			want := memtool.New(storetest.Bare(s), opts).Run(ctx, in)
			if max == 400 && !strings.Contains(got.Text, "[Listing cut at 400 characters") {
				t.Errorf("view %s at 400 characters is not cut:\n%s", p, got.Text)
			}
			if got != want {
				t.Errorf("max %d, view %s:\nby names:\n%s\nby ReadDir:\n%s", max, p, got.Text, want.Text)
			}
		}
	}
	r := memtool.New(s, nil).Run(ctx, []byte(`{"command":"view","path":"/memories"}`))
	for _, bad := range []string{"fifo", "a2.md", "link-out", "locked", ".hidden", "node_modules", ".memtool"} {
		if strings.Contains(r.Text, bad) {
			t.Errorf("the listing shows %q:\n%s", bad, r.Text)
		}
	}
	if i, j := strings.Index(r.Text, "\U0001F600"), strings.Index(r.Text, "\uff61"); i < 0 || j < 0 || i > j {
		t.Errorf("the listing does not sort an astral name before U+FF61 (UTF-16 order):\n%s", r.Text)
	}
}

// ListDir reads a directory of at most max names as ReadDir does (less a
// FIFO, which the directory types), without calling fn; one with more
// names gives fn every name ListNames gives, until fn stops it; a missing
// directory or a file fails before fn is called.
func TestListDir(t *testing.T) {
	ctx := context.Background()
	_, s := listTree(t)
	called := 0
	count := func(string) bool { called++; return true }
	infos, err := s.ReadDir(ctx, "")
	must.Succeed(t, err)
	entries, many, err := s.ListDir(ctx, "", len(infos), count)
	must.Succeed(t, err)
	want := slices.DeleteFunc(slices.Clone(infos), func(fi memtool.FileInfo) bool { return fi.Name == "fifo" })
	if many || called != 0 || !slices.Equal(entries, want) {
		t.Errorf("ListDir(max %d) = many %v, fn called %d times, entries\n%v\nwant ReadDir's\n%v", len(infos), many, called, entries, want)
	}

	names, err := listNames(ctx, s, "")
	must.Succeed(t, err)
	var got []string
	entries, many, err = s.ListDir(ctx, "", 5, func(n string) bool { got = append(got, n); return true })
	must.Succeed(t, err)
	slices.Sort(names)
	slices.Sort(got)
	if !many || entries != nil || !slices.Equal(got, names) {
		t.Errorf("ListDir(max 5) = many %v, %d entries, names %q; want ListNames' %q", many, len(entries), got, names)
	}
	called = 0
	if _, many, err := s.ListDir(ctx, "", 0, func(string) bool { called++; return called < 3 }); err != nil || !many || called != 3 {
		t.Errorf("ListDir stopped at the 3rd name: many %v, %v, fn called %d times", many, err, called)
	}

	// sub holds two names: max 2 examines them, max 1 names them.
	entries, many, err = s.ListDir(ctx, "sub", 2, count)
	if err != nil || many || len(entries) != 2 {
		t.Errorf("ListDir(sub, 2) = %v, %v, %v", entries, many, err)
	}
	if _, many, err := s.ListDir(ctx, "sub", 1, func(string) bool { return true }); err != nil || !many {
		t.Errorf("ListDir(sub, 1): many %v, %v", many, err)
	}
	called = 0
	if _, _, err := s.ListDir(ctx, "missing", 0, count); !errors.Is(err, memtool.ErrNotExist) || called != 0 {
		t.Errorf("ListDir of a missing directory: %v (fn called %d times), want ErrNotExist", err, called)
	}
	if _, _, err := s.ListDir(ctx, "a.md", 0, count); !errors.Is(err, memtool.ErrNotDir) || called != 0 {
		t.Errorf("ListDir of a file: %v (fn called %d times), want ErrNotDir", err, called)
	}
	if memtool.Has[memtool.DirLister](storetest.Bare(s)) {
		t.Error("the bare store is a DirLister")
	}
}

// TestListingWhileRenamed lists a large directory on a tmpfs while other
// writers replace some of its files and rename one back and forth. Every
// listing is of one moment: each file that exists throughout is listed
// once, and the renamed file under exactly one of its names. (tmpfs gives
// a name renamed into a directory a new place in it, so a listing read in
// several getdents calls may pass over a replaced file, or see both
// names of a renamed one; and a pending signal cuts a call short, which a
// storm of signals makes common here.)
func TestListingWhileRenamed(t *testing.T) {
	dir := filepath.Join(hostfault.Tmpfs(t, "size=64m,mode=0700"), "store")
	s := open(t, dir, nil)
	ctx := t.Context()
	const files, churned = 1000, 50
	for i := range files {
		if err := s.WriteFile(ctx, fmt.Sprintf("f%05d", i), []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteFile(ctx, "moving", []byte("m"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.WriteFile(ctx, fmt.Sprintf("f%05d", i%churned), []byte(fmt.Sprint(i)), memtool.Replace); err != nil {
				t.Error(err)
				return
			}
			from, to := "moving", "moving2"
			if i%2 == 1 {
				from, to = to, from
			}
			if err := s.Rename(ctx, from, to); err != nil {
				t.Error(err)
				return
			}
		}
	})
	// A signal pending on the reading thread ends a getdents call early
	// (after its first entry), as Go's preemption signals do under load:
	// a storm of them makes the reads that come in parts common.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			syscall.Kill(os.Getpid(), syscall.SIGURG)
		}
	})
	defer wg.Wait()
	defer close(stop)
	check := func(call string, got []string) bool {
		t.Helper()
		seen := make(map[string]int, len(got))
		for _, n := range got {
			seen[n]++
		}
		ok := seen["moving"]+seen["moving2"] == 1
		if !ok {
			t.Errorf("%s lists moving %d and moving2 %d times, want one of them once", call, seen["moving"], seen["moving2"])
		}
		for i := range files {
			if n := fmt.Sprintf("f%05d", i); seen[n] != 1 {
				t.Errorf("%s lists %s %d times, want once", call, n, seen[n])
				ok = false
			}
		}
		return ok
	}
	for range 100 {
		entries, err := s.ReadDir(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if !check("ReadDir", names(entries)) {
			return
		}
		entries, many, err := s.ListDir(ctx, "", files+10, func(string) bool { return true })
		if err != nil || many {
			t.Fatalf("ListDir = many %v, %v", many, err)
		}
		if !check("ListDir", names(entries)) {
			return
		}
	}
}
