// Package treesnap lists what a write could change in a directory tree on
// the host, for tests that check that reading a store writes nothing.
package treesnap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Take lists every entry under dir, dir included, with its path relative
// to dir, its mode and its bytes (a link's target), and, if mtimes, the
// modification time of every directory, which a file made and removed
// again would move.
func Take(dir string, mtimes bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.IsDir():
			if mtimes {
				line += " mtime " + fi.ModTime().String()
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %q", data)
		}
		out = append(out, line)
		return nil
	})
	return out, err
}
