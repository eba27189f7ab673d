// Package hostfault makes faults of the host for tests, for real: a small
// file system that fills up, a mount made read-only, an overlay whose lower
// layer's directories do not rename, a machine that loses its power (an
// ext4 on a loop device, PowerLoss, and a stricter file system over FUSE,
// StrictFS). Mounting needs root:
// without it a test is skipped with a message, except under CI (which
// runs as root), where a test that cannot make its fault fails loudly.
package hostfault

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Unavailable skips t, saying why, or fails it under CI, where everything
// a test needs is there.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("this test must run under CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}

// NeedRoot stops t (see Unavailable) unless the test runs as root; what
// says what needs it.
func NeedRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, what+" needs root")
	}
}

// Mount runs mount(8) with args and dir, as root, and unmounts dir when
// the test ends.
func Mount(t testing.TB, dir string, args ...string) {
	t.Helper()
	NeedRoot(t, "mounting a file system")
	if out, err := exec.Command("mount", append(args, dir)...).CombinedOutput(); err != nil {
		Unavailable(t, fmt.Sprintf("mount %q: %v: %s", args, err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// Tmpfs mounts a tmpfs with the mount options given (such as
// "size=2m,mode=0700") on a new directory right under os.TempDir, which
// other users (a database server's) can reach, and returns the directory.
// It is unmounted and removed when the test ends.
func Tmpfs(t testing.TB, options string) string {
	t.Helper()
	NeedRoot(t, "mounting a tmpfs")
	dir, err := os.MkdirTemp("", "memtool-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // runs after the unmount
	Mount(t, dir, "-t", "tmpfs", "-o", options, "tmpfs")
	return dir
}

// Remount makes the mount at dir read-only, or writable again.
func Remount(t testing.TB, dir string, readOnly bool) {
	t.Helper()
	mode := "rw"
	if readOnly {
		mode = "ro"
	}
	if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount -o remount,%s %s: %v: %s", mode, dir, err, out)
	}
}

// Ext4 makes an ext4 file system of size bytes in an image file, with
// mkfs.ext4's extra arguments (such as "-b", "1024"), mounts it through a
// loop device on a new directory under os.TempDir and returns the
// directory. It is unmounted and removed when the test ends.
func Ext4(t testing.TB, size int64, mkfsArgs ...string) string {
	t.Helper()
	NeedRoot(t, "mounting an ext4 image")
	img, err := os.CreateTemp("", "memtool-ext4-*.img")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(img.Name()) }) // runs after the unmount
	err = img.Truncate(size)
	if cerr := img.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"-q", "-F"}, mkfsArgs...), img.Name())
	if out, err := exec.Command("mkfs.ext4", args...).CombinedOutput(); err != nil {
		Unavailable(t, fmt.Sprintf("mkfs.ext4 %q: %v: %s", args, err, out))
	}
	dir, err := os.MkdirTemp("", "memtool-ext4-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	Mount(t, dir, "-o", "loop", img.Name())
	return dir
}

// Overlay mounts an overlayfs whose lower layer is the directory lower, as
// a container's image layer is below its writable layer, and returns the
// merged directory. The upper layer is on a tmpfs of its own (an upper
// layer may not be on an overlayfs, as a container's /tmp may be).
// Without redirect_dir (the kernel's default, and Docker's), a directory
// of the lower layer cannot be renamed there (EXDEV). It is unmounted
// when the test ends.
func Overlay(t testing.TB, lower string) string {
	t.Helper()
	base := Tmpfs(t, "size=64m,mode=0700")
	dirs := map[string]string{}
	for _, d := range []string{"upper", "work", "merged"} {
		dirs[d] = filepath.Join(base, d)
		if err := os.Mkdir(dirs[d], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	opts := "redirect_dir=off,lowerdir=" + lower + ",upperdir=" + dirs["upper"] + ",workdir=" + dirs["work"]
	Mount(t, dirs["merged"], "-t", "overlay", "-o", opts, "overlay")
	return dirs["merged"]
}

// Fill fills the file system at mnt to its last block (a big file, then
// small ones until not one more byte fits), then frees free bytes of it,
// and returns what frees the rest.
func Fill(t testing.TB, mnt string, free int64) (freeAll func()) {
	t.Helper()
	name := filepath.Join(mnt, "fill")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, 64 << 10, 1 << 10} {
		for {
			if _, err := f.Write(make([]byte, chunk)); err != nil {
				break
			}
		}
		f.Sync()
	}
	ballast := []string{name}
	for i := 0; ; i++ {
		small := filepath.Join(mnt, fmt.Sprintf("fill-%d", i))
		ballast = append(ballast, small)
		if err := os.WriteFile(small, []byte("x"), 0o600); err != nil {
			break
		}
	}
	fi, err := f.Stat()
	if err == nil {
		err = f.Truncate(fi.Size() - free)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		for _, b := range ballast {
			os.Remove(b)
		}
	}
}
