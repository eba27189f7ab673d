package main

import (
	"bufio"
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// readLine gives each line whole, without its newline, up to the limit;
// a longer one is consumed and reported too long, and the next line is
// read as usual.
func TestReadLine(t *testing.T) {
	const limit = 1 << 20
	lengths := []int{0, 1, 4095, 4096, 70000, limit, limit + 1, 5, 3 * limit, limit - 1}
	var in strings.Builder
	for i, n := range lengths {
		in.WriteString(strings.Repeat(string(rune('a'+i)), n) + "\n")
	}
	in.WriteString("last, without a newline")
	r := bufio.NewReaderSize(strings.NewReader(in.String()), 64<<10)
	for i, n := range lengths {
		line, tooLong, err := readLine(r, limit)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		switch {
		case n > limit && (!tooLong || line != nil):
			t.Errorf("a line of %d bytes: tooLong %v, %d bytes kept", n, tooLong, len(line))
		case n <= limit && (tooLong || string(line) != strings.Repeat(string(rune('a'+i)), n)):
			t.Errorf("a line of %d bytes: tooLong %v, %d bytes", n, tooLong, len(line))
		}
	}
	if line, tooLong, err := readLine(r, limit); string(line) != "last, without a newline" || tooLong || err == nil {
		t.Errorf("the last line: %q %v %v", line, tooLong, err)
	}
}

// Reading a long line allocates about twice its length in all (its room
// doubles as it grows), not the five times that append's growth by a
// quarter leaves for the collector.
func TestReadLineAllocates(t *testing.T) {
	const n = 16 << 20
	data := append(bytes.Repeat([]byte("x"), n), '\n')
	r := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	line, _, err := readLine(r, 64<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(line) != n {
		t.Fatalf("%d bytes, %v", len(line), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*n {
		t.Errorf("reading a line of %d MiB allocated %d MiB", n>>20, got>>20)
	}
}
