package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memtool/memtool/encrypt"
)

// runKeygen makes a new encryption key (package encrypt): printed, written
// to a new key file, or put first in an existing key file for rotation.
func runKeygen(ctx context.Context, env *cliEnv, args []string) int {
	fset := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fset.SetOutput(env.stderr)
	fset.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: memtool keygen [--id ID] [--out FILE | --rotate FILE]\n\nPrints a new encryption key (ID:base64) on stdout, or writes it to a key file (mode 0600).\n\nFlags:\n")
		fset.PrintDefaults()
	}
	var id, out, rotate string
	fset.StringVar(&id, "id", "", "the key's ID (up to 16 letters, digits, '-', '_', '.'; default: random)")
	fset.StringVar(&out, "out", "", "write the key to this new file (never replaces one)")
	fset.StringVar(&rotate, "rotate", "", "put the key first in this existing key file, keeping the old keys for reading")
	rest, err := parseFlags(fset, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 || out != "" && rotate != "" {
		fmt.Fprintf(env.stderr, "memtool keygen: takes no arguments, and at most one of --out and --rotate\n")
		return exitUsage
	}
	key, err := encrypt.NewKey(id)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool keygen: %v\n", err)
		return exitUsage
	}
	switch {
	case out != "":
		err = writeNewFile(out, []byte(key.String()+"\n"))
	case rotate != "":
		err = rotateKeyFile(rotate, key)
	default:
		if _, err := fmt.Fprintln(env.stdout, key.String()); err != nil {
			return exitBrokenIO
		}
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool keygen: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(env.stderr, "memtool keygen: key %s written to %s\n", key.ID, out+rotate)
	return exitOK
}

// writeNewFile creates name with mode 0600 and data, durably; it never
// replaces a file.
func writeNewFile(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	return f.Close()
}

// rotateKeyFile puts key first in the key file name, which must hold valid
// keys, none with key's ID. The file is replaced atomically.
func rotateKeyFile(name string, key encrypt.Key) error {
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
	if err := writeNewFile(tmp, append([]byte(key.String()+"\n"), old...)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s is in the way (a keygen that did not finish?); remove it", tmp)
		}
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
