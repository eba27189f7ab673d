package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/internal/durable"
)

func setupKeygen(fs *flag.FlagSet) runFunc {
	id := fs.String("id", "", "the key's ID (up to 16 letters, digits, '-', '_', '.'; default: random)")
	out := fs.String("out", "", "write the key to this new file (never replaces one)")
	rotate := fs.String("rotate", "", "put the key first in this existing key file, keeping the old keys for reading")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *out != "" && *rotate != "" {
			return inv.fail(exitUsage, "takes no arguments, and at most one of --out and --rotate")
		}
		return runKeygen(inv, *id, *out, *rotate)
	}
}

// runKeygen makes a new encryption key (package encrypt): printed, written
// to a new key file, or put first in an existing key file for rotation.
func runKeygen(inv *invocation, id, out, rotate string) int {
	env := inv.env
	key, err := encrypt.NewKey(id)
	if err != nil {
		return inv.fail(exitUsage, "%v", err)
	}
	switch {
	case out != "":
		err = durable.WriteNew(out, []byte(key.Text()+"\n"), 0o600)
		if errors.Is(err, fs.ErrExist) {
			return inv.fail(exitFailed, "%s exists; keygen --out never replaces a file. To put a new key first in that key file, keeping its keys for reading, run memtool keygen --rotate %s", out, out)
		}
	case rotate != "":
		err = rotateKeyFile(rotate, key)
	default:
		if _, err := fmt.Fprintln(env.stdout, key.Text()); err != nil {
			return exitBrokenIO
		}
		return exitOK
	}
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	inv.fail(exitOK, "key %s written to %s", key.ID, out+rotate)
	return exitOK
}

// rotateKeyFile puts key first in the key file name, which must hold valid
// keys, none with key's ID. The file is replaced atomically and durably,
// under a lock on its directory, so that rotations at the same time (in
// any processes) each keep the others' keys: a key lost after rekey used
// it would leave the files it sealed unreadable.
//
// A name that is a symbolic link is followed: the file it leads to gets
// the key, keeping its mode, and the link stays, so that whatever reads
// that file (a service, through its group) sees the new key.
func rotateKeyFile(name string, key encrypt.Key) error {
	name, err := filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close() // drops the lock
	if err := flock(dir); err != nil {
		return fmt.Errorf("locking the key file's directory: %w", err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	keys, err := encrypt.ParseKeys(string(old))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, k := range keys {
		if k.ID == key.ID {
			return fmt.Errorf("%s already has a key %q", name, key.ID)
		}
	}
	tmp := filepath.Join(filepath.Dir(name), ".keygen-"+key.ID+".tmp")
	if err := durable.WriteNew(tmp, append([]byte(key.Text()+"\n"), old...), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s is in the way (a keygen that did not finish?); remove it", tmp)
		}
		return err
	}
	// The file's own mode, which the umask may have narrowed at creation.
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return dir.Sync()
}

// flock takes f's exclusive flock, waiting for it.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
