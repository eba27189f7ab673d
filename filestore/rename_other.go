//go:build !linux

package filestore

import "os"

// renameNoReplace checks the destination and renames under the store's lock.
func renameNoReplace(olddirfd int, oldname string, newdirfd int, newname string) error {
	return renameChecked(olddirfd, oldname, newdirfd, newname)
}

// pinAt pins nothing here: the rename frees the replaced file's blocks
// itself (see the Linux pinAt).
func pinAt(d *os.File, base string) pin { return pin{} }
