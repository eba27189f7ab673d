package subcmd

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var got []string // the arguments each command ran on
	cmds := []Command{
		{"gen", func(args []string) error { got = append(got, "gen "+strings.Join(args, " ")); return nil }},
		{"exec", func(args []string) error { return errors.New("it failed") }},
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
		ran    []string
	}{
		{nil, 2, "usage: bench gen|exec [flags]\n", nil},
		{[]string{"gen", "-out", "dir"}, 0, "", []string{"gen -out dir"}},
		{[]string{"gen"}, 0, "", []string{"gen "}},
		{[]string{"exec", "x"}, 1, "bench exec: it failed\n", nil},
		{[]string{"report"}, 1, "bench report: unknown subcommand \"report\"\n", nil},
	} {
		got = nil
		var stderr strings.Builder
		code := Run("bench", tc.args, &stderr, cmds)
		if code != tc.code || stderr.String() != tc.stderr || !slices.Equal(got, tc.ran) {
			t.Errorf("Run(%q) = %d, stderr %q, ran %q; want %d, %q, %q", tc.args, code, stderr.String(), got, tc.code, tc.stderr, tc.ran)
		}
	}
}
