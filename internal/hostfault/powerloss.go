package hostfault

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// PowerLossOptions are the ext4 mount options of a PowerLoss: nothing
// reaches the image until an fsync (or a syncfs, or an unmount) forces it
// there. commit=600 stops the journal's periodic commit (every 5 s by
// default) for ten minutes, so only an fsync commits what a change did to
// the file system's metadata; data=writeback lets such a commit carry a
// name or a size without the data the name or the size is of, so a file
// renamed or linked without an fsync of its data first can come back
// empty or short; noauto_da_alloc stops ext4 from writing a file's data
// on its own when the file replaces another by rename, which would hide
// a missing fsync on the kinds of replace memtool makes.
const PowerLossOptions = "loop,data=writeback,noauto_da_alloc,commit=600"

// A PowerLoss is a file system whose machine can lose its power, for
// tests: an ext4 in an image file, mounted at Dir with PowerLossOptions.
// A program that writes there sees the file system as on any machine, and
// the image holds only what the kernel has written to its device: what
// an fsync made durable, and whatever else the kernel chose to write by
// then. Crash takes the image as it is at that moment, as the disk would
// be found after the power went off, and mounts it at Dir in place of
// the file system the program saw, as after a reboot.
type PowerLoss struct {
	Dir     string
	t       testing.TB
	img     string
	mounted bool
}

// NewPowerLoss makes an ext4 of size bytes (sparse) in an image under
// os.TempDir and mounts it at a new directory, which is removed with the
// image when the test ends.
func NewPowerLoss(t testing.TB, size int64) *PowerLoss {
	t.Helper()
	NeedRoot(t, "mounting an ext4 image")
	dir, err := os.MkdirTemp("", "memtool-powerloss-")
	if err != nil {
		t.Fatal(err)
	}
	p := &PowerLoss{Dir: dir, t: t}
	t.Cleanup(func() {
		p.unmount()
		os.Remove(p.img)
		os.Remove(dir)
	})
	p.img = p.newImage()
	if err := os.Truncate(p.img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", p.img).CombinedOutput(); err != nil {
		Unavailable(t, fmt.Sprintf("mkfs.ext4: %v: %s", err, out))
	}
	p.mount()
	return p
}

// Crash copies the image as the kernel has written it so far, without
// writing anything more to it, then unmounts the file system (which
// writes the rest, to the old image, now thrown away) and mounts the
// copy at Dir; mounting it replays ext4's journal, as a reboot would.
// Every process writing under Dir must have ended (killed: a crash gives
// no chance to finish) and every file there must be closed.
func (p *PowerLoss) Crash() {
	t := p.t
	t.Helper()
	img := p.newImage()
	if out, err := exec.Command("cp", "--sparse=always", p.img, img).CombinedOutput(); err != nil {
		os.Remove(img)
		t.Fatalf("copying the image: %v: %s", err, out)
	}
	p.unmount()
	os.Remove(p.img)
	p.img = img
	p.mount()
}

func (p *PowerLoss) newImage() string {
	f, err := os.CreateTemp("", "memtool-powerloss-*.img")
	if err != nil {
		p.t.Fatal(err)
	}
	f.Close()
	return f.Name()
}

func (p *PowerLoss) mount() {
	p.t.Helper()
	if out, err := exec.Command("mount", "-o", PowerLossOptions, p.img, p.Dir).CombinedOutput(); err != nil {
		Unavailable(p.t, fmt.Sprintf("mount -o %s: %v: %s", PowerLossOptions, err, out))
	}
	p.mounted = true
}

func (p *PowerLoss) unmount() {
	p.t.Helper()
	if !p.mounted {
		return
	}
	p.mounted = false
	if out, err := exec.Command("umount", p.Dir).CombinedOutput(); err != nil {
		p.t.Errorf("umount %s: %v: %s", p.Dir, err, out)
	}
}
