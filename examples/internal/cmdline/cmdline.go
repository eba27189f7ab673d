// Package cmdline reads the command line the examples that keep their
// memory in a directory share: an optional -dir flag, then the task as the
// remaining words. It is the one piece of the examples that is not about
// memtool; each example's main shows the rest.
package cmdline

import (
	"flag"
	"log"
	"os"
	"path/filepath"
	"strings"
)

// DirAndTask parses the command line: -dir (defaultDir unless given), then
// the task. With no task words, the task is defaultTask, or, if that is
// empty, DirAndTask prints the usage and exits.
func DirAndTask(defaultDir, defaultTask string) (dir, task string) {
	d := flag.String("dir", defaultDir, "the memory directory")
	flag.Parse()
	task = strings.Join(flag.Args(), " ")
	if task == "" {
		task = defaultTask
	}
	if task == "" {
		log.Fatalf("usage: %s [-dir DIR] TASK", filepath.Base(os.Args[0]))
	}
	return *d, task
}
