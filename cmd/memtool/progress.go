package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// progress draws the progress bar of memtool migrate on stderr when it is
// a terminal, and nothing otherwise. Each drawing goes back to the start of
// the line and clears it, so that a shorter line leaves nothing of a
// longer one behind.
type progress struct {
	w             io.Writer // nil: not a terminal
	files, copied int
	total, bytes  int64
}

func newProgress(stderr io.Writer, files int, total int64) *progress {
	p := &progress{files: files, total: total}
	if isTerminal(stderr) {
		p.w = stderr
		p.draw()
	}
	return p
}

func (p *progress) add(n int64) {
	p.copied++
	p.bytes += n
	p.draw()
}

const barWidth = 30

// clearLine is the ANSI sequence that erases from the cursor to the end of
// the line.
const clearLine = "\x1b[K"

func (p *progress) draw() {
	if p.w == nil {
		return
	}
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.bytes) / float64(p.total)
	} else if p.files > 0 {
		frac = float64(p.copied) / float64(p.files)
	}
	// A source written during the migration may hold more than planned.
	n := min(int(frac*barWidth), barWidth)
	fmt.Fprintf(p.w, "\r%smigrating [%s%s] %d/%s, %s/%s", clearLine, strings.Repeat("=", n), strings.Repeat(" ", barWidth-n), p.copied, plural(p.files, "file"), humanBytes(p.bytes), humanBytes(p.total))
}

// done ends the bar's line, so that what is written next starts a line of
// its own.
func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintln(p.w)
	}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && (isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd()))
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
