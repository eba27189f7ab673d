//go:build linux

package main

import "syscall"

// readEntries reads every entry of the directory dir with getdents64,
// 64 KiB at a time, and nothing else.
func readEntries(dir string) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return err
		}
	}
}
