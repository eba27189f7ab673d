package history

import (
	"fmt"
	"strings"
)

// Diff returns a unified diff (3 lines of context) from a to b, labelled
// with the names given; "" if they are equal. A last line without a
// newline is marked so, as diff -u does. Files whose line counts
// multiply to more than 4 million are shown as wholly replaced.
func Diff(a, b, nameA, nameB string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := lineOps(x, y)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", nameA, nameB)
	const ctx = 3
	// Walk the edit script and emit hunks around the changes.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// A run of equal lines: does the next change come within 2*ctx?
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(len(ops), end+ctx)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		var body strings.Builder
		for _, op := range ops[start:end] {
			body.WriteByte(op.kind)
			body.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n%s", hunkRange(aStart, aLen), hunkRange(bStart, bLen), body.String())
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines returns the lines of s, each with its newline: a final
// newline ends the last line rather than starting an empty one, and a
// last line without one differs from the same text with one.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// op is one line of the edit script: ' ' kept, '-' removed, '+' added;
// a and b are the 0-based line positions in each file before it.
type op struct {
	kind byte
	text string
	a, b int
}

// lineOps computes a shortest edit script by longest common subsequence.
func lineOps(x, y []string) []op {
	n, m := len(x), len(y)
	if n*m > 4_000_000 {
		var ops []op
		for i, l := range x {
			ops = append(ops, op{'-', l, i, 0})
		}
		for j, l := range y {
			ops = append(ops, op{'+', l, n, j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
		}
	}
	return ops
}
