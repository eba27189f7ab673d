//go:build !linux

package filestore

import (
	"errors"
	"os"
)

// Without O_TMPFILE a write's temp file is made under the write lock.
func openStaged(*os.File) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

func linkStaged(*os.File, int, string) error {
	return errors.ErrUnsupported
}
