//go:build !linux

package filestore

import "os"

func readNames(d *os.File) ([]string, error) { return readNamesPortable(d) }
