//go:build linux

package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ListDir of a directory holding at most max names returns its entries
// (many false), however much room the entries it leaves out take: here
// max names of 255 bytes, and FIFOs of names as long, which the
// directory types and ListDir does not list.
func TestListDirAtMostMaxBesideUnlisted(t *testing.T) {
	ctx := context.Background()
	dir, s := openTemp(t)
	for _, max := range []int{10, 100, 1000} {
		sub := fmt.Sprint("d", max)
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
		for i := range max {
			if err := os.WriteFile(filepath.Join(dir, sub, fmt.Sprintf("%04d%s", i, strings.Repeat("n", 251))), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 8 {
			if err := syscall.Mkfifo(filepath.Join(dir, sub, fmt.Sprintf("%04d%s", i, strings.Repeat("f", 251))), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		called := 0
		entries, many, err := s.ListDir(ctx, sub, max, func(string) bool { called++; return true })
		if err != nil || many || len(entries) != max || called != 0 {
			t.Errorf("ListDir(%d names and 8 FIFOs, max %d) = %d entries, many %v, fn called %d times, %v; want the %d entries", max, max, len(entries), many, called, err, max)
		}
	}
}
