package filestore_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// OpenFile refuses what ReadFile refuses, at the open, and a read past
// the limit (a file that grew) fails with ErrTooLarge.
func TestOpenFile(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	r, size, err := s.OpenFile(ctx, "b.md", 1<<20)
	must.Succeed(t, err)
	got, err := io.ReadAll(r)
	must.Succeed(t, err)
	must.Succeed(t, r.Close())
	if want, _ := s.ReadFile(ctx, "b.md", 1<<20); string(got) != string(want) || size != int64(len(want)) {
		t.Errorf("OpenFile read %q (size %d), ReadFile %q", got, size, want)
	}
	for name, want := range map[string]error{
		"missing.md":  memtool.ErrNotExist,
		"sub":         memtool.ErrIsDir,
		"fifo":        memtool.ErrIrregular,
		"a2.md":       memtool.ErrIrregular,
		"link-out.md": memtool.ErrEscapes,
	} {
		if _, _, err := s.OpenFile(ctx, name, 1<<20); !errors.Is(err, want) {
			t.Errorf("OpenFile(%s): %v, want %v", name, err, want)
		}
	}
	if _, _, err := s.OpenFile(ctx, "b.md", 10); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("OpenFile over the limit: %v, want ErrTooLarge", err)
	}
	// The file grows past the limit after the open.
	p := filepath.Join(dir, "grows.md")
	must.Succeed(t, os.WriteFile(p, []byte("0123456789"), 0o600))
	r, _, err = s.OpenFile(ctx, "grows.md", 10)
	must.Succeed(t, err)
	defer r.Close()
	must.Succeed(t, os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o600))
	if _, err := io.ReadAll(r); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("reading a file grown past the limit: %v, want ErrTooLarge", err)
	}
}

// ReadFile and OpenFile answer alike at the top and one and two levels
// down, whichever way the file is opened (through its directory's
// descriptor, or through the root where a link is in the way): a file's
// bytes; a link inside followed, one out refused; a directory, a FIFO, a
// file with two links, one over the limit, a missing one and the names
// "." and ".." refused, each with its class.
func TestReadFileEverywhere(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	must.Succeed(t, syscall.Mkfifo(filepath.Join(dir, "sub", "fifo"), 0o600))
	must.Succeed(t, os.Link(filepath.Join(dir, "sub", "x.md"), filepath.Join(dir, "sub", "x2.md")))
	must.Succeed(t, os.Symlink("../b.md", filepath.Join(dir, "sub", "link-up.md")))
	must.Succeed(t, os.Symlink("../../outside.txt", filepath.Join(dir, "sub", "link-out.md")))
	must.Succeed(t, os.Symlink("deep", filepath.Join(dir, "sub", "link-deep")))
	b, err := os.ReadFile(filepath.Join(dir, "b.md"))
	must.Succeed(t, err)
	y, err := os.ReadFile(filepath.Join(dir, "sub", "deep", "y.md"))
	must.Succeed(t, err)
	for name, want := range map[string]any{
		"b.md":                string(b),
		"sub/deep/y.md":       string(y),
		"link-in.md":          string(b),
		"sub/link-up.md":      string(b),
		"link-dir/deep/y.md":  string(y),
		"sub/link-deep/y.md":  string(y),
		"link-out.md":         memtool.ErrEscapes,
		"sub/link-out.md":     memtool.ErrEscapes,
		"sub":                 memtool.ErrIsDir,
		"sub/deep":            memtool.ErrIsDir,
		"link-dir":            memtool.ErrIsDir,
		"fifo":                memtool.ErrIrregular,
		"sub/fifo":            memtool.ErrIrregular,
		"a2.md":               memtool.ErrIrregular,
		"sub/x2.md":           memtool.ErrIrregular,
		"missing.md":          memtool.ErrNotExist,
		"sub/missing.md":      memtool.ErrNotExist,
		"missing/x.md":        memtool.ErrNotExist,
		"b.md/x.md":           memtool.ErrNotExist,
		".":                   memtool.ErrIsDir,
		"sub/.":               memtool.ErrIsDir,
		"sub/deep/..":         memtool.ErrIsDir,
		"locked/x.md":         nil, // any error: root may search a mode 000 directory
		"sub/deep/y.md/extra": memtool.ErrNotExist,
	} {
		got, err := s.ReadFile(ctx, name, 1<<20)
		r, size, oerr := s.OpenFile(ctx, name, 1<<20)
		var streamed []byte
		if oerr == nil {
			streamed, oerr = io.ReadAll(r)
			r.Close()
		}
		switch want := want.(type) {
		case string:
			if err != nil || string(got) != want || oerr != nil || string(streamed) != want || size != int64(len(want)) {
				t.Errorf("%s: ReadFile %q, %v; OpenFile %q (size %d), %v; want %q", name, got, err, streamed, size, oerr, want)
			}
		case error:
			if !errors.Is(err, want) || !errors.Is(oerr, want) {
				t.Errorf("%s: ReadFile %v, OpenFile %v; want %v", name, err, oerr, want)
			}
		default:
			if (err == nil) != (oerr == nil) {
				t.Errorf("%s: ReadFile %v, OpenFile %v; want the same answer", name, err, oerr)
			}
		}
	}
	if _, err := s.ReadFile(ctx, "sub/deep/y.md", 3); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("sub/deep/y.md over the limit: %v, want ErrTooLarge", err)
	}
	if _, _, err := s.OpenFile(ctx, "sub/deep/y.md", 3); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("OpenFile(sub/deep/y.md) over the limit: %v, want ErrTooLarge", err)
	}
}

// A FIFO where a write expects a directory is refused at once, not waited
// on (an open for reading of a FIFO blocks until a writer comes), and the
// write changes nothing; so is a FIFO in the way of a read, and one named
// as the tenants' directory.
func TestFIFOInThePath(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	must.Succeed(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600))
	for _, op := range []struct {
		name string
		fn   func() error
	}{
		{"WriteFile", func() error { return s.WriteFile(ctx, "pipe/x.md", []byte("x"), memtool.CreateOnly) }},
		{"Update", func() error {
			return s.Update(ctx, "pipe/x.md", 1<<20, func(b []byte) ([]byte, error) { return append(b, 'x'), nil })
		}},
		{"Remove", func() error { return s.Remove(ctx, "pipe/x.md") }},
		{"Mkdir", func() error { return s.Mkdir(ctx, "pipe/d") }},
		{"ReadFile", func() error { _, err := s.ReadFile(ctx, "pipe/x.md", 1<<20); return err }},
		{"ReadDir", func() error { _, err := s.ReadDir(ctx, "pipe"); return err }},
	} {
		err := storetest.Answer(t, op.name+" under a FIFO", op.fn)
		if err == nil {
			t.Errorf("%s under a FIFO succeeded", op.name)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO changed: %v, %v", fi, err)
	}

	// A FIFO named as the tenants' directory: listing tenants answers.
	other := t.TempDir()
	must.Succeed(t, syscall.Mkfifo(filepath.Join(other, filestore.TenantsDir), 0o600))
	o, err := filestore.Open(other, nil)
	must.Succeed(t, err)
	defer o.Close()
	if err := storetest.Answer(t, "Tenants with a FIFO for its directory", func() error { _, err := o.Tenants(ctx); return err }); err == nil {
		t.Error("Tenants with a FIFO for its directory succeeded")
	}
}

// Stat of every entry, at the top and one and two levels down, is the
// entry ReadDir gives for it, whichever way Stat examines it (in its
// directory's descriptor, or through the root for a link); the root is a
// directory; a missing name is ErrNotExist.
func TestStatIsReadDirEntry(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	must.Succeed(t, os.Symlink("deep", filepath.Join(dir, "sub", "link-deep")))
	must.Succeed(t, os.Mkdir(filepath.Join(dir, "sub", "locked"), 0o000))
	checked := 0
	for _, d := range []string{"", "sub", "sub/deep", "link-dir"} {
		entries, err := s.ReadDir(ctx, d)
		must.Succeed(t, err)
		for _, want := range entries {
			name := want.Name
			if d != "" {
				name = d + "/" + name
			}
			got, err := s.Stat(ctx, name)
			if err != nil || got != want {
				t.Errorf("Stat(%s) = %+v, %v; ReadDir(%q) gives %+v", name, got, err, d, want)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d entries checked", checked)
	}
	if fi, err := s.Stat(ctx, ""); err != nil || !fi.IsDir() || fi.Name != "" {
		t.Errorf("Stat of the root: %+v, %v", fi, err)
	}
	for _, name := range []string{"missing", "sub/missing", "missing/x"} {
		if _, err := s.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("Stat(%s): %v, want ErrNotExist", name, err)
		}
	}
}

// A FIFO or a device where a directory is expected is refused without
// being opened (§4: the file store never opens FIFOs or devices): a
// writer waiting on the FIFO is not let through, and a device whose
// driver is missing answers ErrNotDir, not the error of its open.
func TestNoOpenOfFIFOOrDevice(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	must.Succeed(t, s.WriteFile(ctx, "f.md", []byte("f"), memtool.CreateOnly))
	ops := func(special string) map[string]func() error {
		return map[string]func() error{
			"ReadDir": func() error { _, err := s.ReadDir(ctx, special); return err },
			"ListNames": func() error {
				return s.ListNames(ctx, special, func(string) bool { return true })
			},
			"ListDir": func() error {
				_, _, err := s.ListDir(ctx, special, 10, func(string) bool { return true })
				return err
			},
			"WriteFile": func() error { return s.WriteFile(ctx, special+"/x", []byte("x"), memtool.CreateOnly) },
			"Mkdir":     func() error { return s.Mkdir(ctx, special+"/x") },
			"Rename":    func() error { return s.Rename(ctx, "f.md", special+"/x") },
		}
	}

	fifo := filepath.Join(dir, "pipe")
	must.Succeed(t, syscall.Mkfifo(fifo, 0o600))
	for name, op := range ops("pipe") {
		// A writer's open of a FIFO waits until a reader opens it.
		let := make(chan struct{})
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
			close(let)
		}()
		time.Sleep(20 * time.Millisecond) // let the writer reach its open
		err := storetest.Answer(t, name+" on a FIFO", op)
		storetest.WantErr(t, name+" on a FIFO", err, memtool.ErrNotDir)
		select {
		case <-let:
			t.Errorf("%s opened the FIFO", name)
		case <-time.After(50 * time.Millisecond):
			fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
			must.Succeed(t, err)
			<-let
			unix.Close(fd)
		}
	}

	hostfault.NeedRoot(t, "a device node")
	// Major 240 is for local use: no driver answers it, so an open fails
	// with ENXIO.
	must.Succeed(t, unix.Mknod(filepath.Join(dir, "dev"), unix.S_IFCHR|0o600, int(unix.Mkdev(240, 77))))
	for name, op := range ops("dev") {
		storetest.WantErr(t, name+" on a device", op(), memtool.ErrNotDir)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "dev")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device changed: %v, %v", fi, err)
	}
	if got := hostContent(t, filepath.Join(dir, "f.md")); got != "f" {
		t.Errorf("f.md holds %q", got)
	}
}
