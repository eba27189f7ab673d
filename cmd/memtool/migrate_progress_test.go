package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMigrateProgressSourceGrew: a source file that grows between the
// plan and its copy (the source is written during the migration) makes
// the copied bytes exceed the planned total; the bar stays full, as does
// one with more files copied than planned. It once panicked (a negative
// strings.Repeat count), ending the migration midway on a terminal.
func TestMigrateProgressSourceGrew(t *testing.T) {
	t.Parallel()
	for _, p := range []*progress{{files: 1, total: 10}, {files: 1}} {
		var buf bytes.Buffer
		p.w = &buf
		p.add(20)
		p.add(0)
		p.done()
		if want := "[" + strings.Repeat("=", barWidth) + "] 2/1 file"; !strings.Contains(buf.String(), want) {
			t.Errorf("bar %q, want it to hold %q", buf.String(), want)
		}
	}
}
