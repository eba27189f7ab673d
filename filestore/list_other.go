//go:build !linux

package filestore

import (
	"context"
	"os"
)

func readNames(ctx context.Context, d *os.File, fn func(string) bool) error {
	return readNamesPortable(ctx, d, fn)
}
