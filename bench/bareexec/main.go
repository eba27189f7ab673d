// Command bareexec is the least a process answering memory tool views over
// a pipe can do: the floor that `bench bare` compares `memtool exec` with
// on the read-only workload (see bench/bare.md).
//
//	bareexec exec --store DIR
//
// takes the same arguments as `memtool exec` on a directory store, reads
// one JSON input a line from stdin and answers each with one line of
// {"is_error":false,"content":TEXT} on stdout: it parses the line with
// encoding/json, opens and reads the file (or reads the directory and
// its subdirectories, with an lstat per entry for its size), formats the
// view text as memtool does, encodes the answer with encoding/json and
// writes it with one write. It knows only views that succeed, of files and
// directories small enough to be shown whole; nothing else (no path
// checks, no locks, no limits, no hidden-name filter beyond the leading
// dot). Anything else ends it with an error: it is a yardstick, not a
// handler.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) != 4 || os.Args[1] != "exec" || os.Args[2] != "--store" {
		fmt.Fprintln(os.Stderr, "usage: bareexec exec --store DIR")
		os.Exit(2)
	}
	if err := serve(os.Args[3], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bareexec:", err)
		os.Exit(1)
	}
}

// input is the part of a tool input a view uses.
type input struct {
	Command   string  `json:"command"`
	Path      string  `json:"path"`
	ViewRange *[2]int `json:"view_range"`
}

// answer is what memtool exec writes for a successful text result.
type answer struct {
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
}

func serve(root string, stdin io.Reader, stdout io.Writer) error {
	r := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		var in input
		if err := json.Unmarshal(line, &in); err != nil {
			return err
		}
		if in.Command != "view" || !strings.HasPrefix(in.Path, "/memories") {
			return fmt.Errorf("not a view under /memories: %s", line)
		}
		text, err := view(root, in)
		if err != nil {
			return err
		}
		out, err := json.Marshal(answer{Content: text})
		if err != nil {
			return err
		}
		if _, err := stdout.Write(append(out, '\n')); err != nil {
			return err
		}
	}
}

// view answers a view of a file, or of a directory when reading it says
// it is one.
func view(root string, in input) (string, error) {
	name := filepath.Join(root, strings.TrimPrefix(in.Path, "/memories"))
	data, err := os.ReadFile(name)
	if errors.Is(err, syscall.EISDIR) {
		return listDir(name, in.Path)
	}
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(data), "\n")
	first, last := 1, len(lines)
	if in.ViewRange != nil {
		first = max(in.ViewRange[0], 1)
		if in.ViewRange[1] != -1 {
			last = min(in.ViewRange[1], last)
		}
	}
	var sb strings.Builder
	sb.WriteString("Here's the content of " + in.Path + " with line numbers:\n")
	for i := first; i <= last; i++ {
		if i > first {
			sb.WriteByte('\n')
		}
		n := strconv.Itoa(i)
		sb.WriteString("      "[len(n):])
		sb.WriteString(n)
		sb.WriteByte('\t')
		sb.WriteString(lines[i-1])
	}
	return sb.String(), nil
}

// listDir lists dir and, one level down, its subdirectories, as memtool's
// directory view shows them.
func listDir(dir, p string) (string, error) {
	var sb strings.Builder
	sb.WriteString("Here're the files and directories up to 2 levels deep in " + p + ", excluding hidden items and node_modules:\n")
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	sb.WriteString(size(fi.Size()) + "\t" + p)
	err = listLevel(&sb, dir, p, 1)
	return sb.String(), err
}

func listLevel(sb *strings.Builder, dir, p string, depth int) error {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		child := p + "/" + e.Name()
		if !e.IsDir() {
			sb.WriteString("\n" + size(fi.Size()) + "\t" + child)
			continue
		}
		sb.WriteString("\n" + size(fi.Size()) + "\t" + child + "/")
		if depth < 2 {
			if err := listLevel(sb, filepath.Join(dir, e.Name()), child, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// size prints a byte count in base 1024 with units B K M G, a whole value
// without decimals, otherwise one decimal.
func size(n int64) string {
	v, unit := float64(n), 0
	for v >= 1024 && unit < 3 {
		v, unit = v/1024, unit+1
	}
	u := "BKMG"[unit : unit+1]
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10) + u
	}
	return strconv.FormatFloat(math.Floor(v*10+0.5)/10, 'f', 1, 64) + u
}
