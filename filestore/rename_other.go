//go:build !linux

package filestore

// renameNoReplace checks the destination and renames under the store's lock.
func renameNoReplace(olddirfd int, oldname string, newdirfd int, newname string) error {
	return renameChecked(olddirfd, oldname, newdirfd, newname)
}
