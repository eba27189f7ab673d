package turn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/turn"
)

// Calls whose paths lead to one entry through a link in a directory
// store run in their order, as calls on one path do: a delete of a
// directory and a create through a link to it, a rename of a file and
// an edit through a link to it.
func TestFollowsThroughLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real", "a.md"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link": "real", "a.md": "real/a.md"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var inputs []json.RawMessage
	for _, in := range []string{
		`{"command":"delete","path":"/memories/real"}`,
		`{"command":"create","path":"/memories/link/new.md","file_text":"x"}`,
		`{"command":"rename","old_path":"/memories/real/a.md","new_path":"/memories/b.md"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}`,
		`{"command":"create","path":"/memories/other.md","file_text":"x"}`,
	} {
		inputs = append(inputs, json.RawMessage(in))
	}
	want := [][]int{nil, {0}, {0}, {0, 2}, nil}
	if got := turn.Follows(t.Context(), memtool.New(s, nil).Store(), inputs); !reflect.DeepEqual(got, want) {
		t.Errorf("Follows = %v, want %v", got, want)
	}
	if got := turn.Follows(t.Context(), nil, inputs); reflect.DeepEqual(got, want) {
		t.Errorf("without the store, Follows = %v: the links' targets are not in the paths", got)
	}
}

// A rename that moves a link (or a directory holding a relative link)
// changes where the names below its new path lead, so a later call under
// that new path may reach an entry its path, resolved before the turn
// ran, does not name: it runs in its order with every other call. Here
// the create through the moved link writes into real, which the delete
// after it removes; at once, the delete could run first and the create
// fail, or the create land in a directory being removed.
func TestFollowsAfterRenameOfLink(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"real", "d", "x/real"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"lnk": "real", "d/rel": "../real"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name   string
		inputs []string
	}{
		{"moved link", []string{
			`{"command":"rename","old_path":"/memories/lnk","new_path":"/memories/l2"}`,
			`{"command":"create","path":"/memories/l2/f.md","file_text":"x"}`,
			`{"command":"delete","path":"/memories/real"}`,
		}},
		{"relative link moved deeper", []string{
			`{"command":"rename","old_path":"/memories/d","new_path":"/memories/x/y"}`,
			`{"command":"create","path":"/memories/x/y/rel/f.md","file_text":"x"}`,
			`{"command":"delete","path":"/memories/x/real"}`,
		}},
	} {
		var inputs []json.RawMessage
		for _, in := range tc.inputs {
			inputs = append(inputs, json.RawMessage(in))
		}
		got := turn.Follows(t.Context(), memtool.New(s, nil).Store(), inputs)
		if !slices.Contains(got[2], 1) {
			t.Errorf("%s: Follows = %v: the delete does not follow the create through the moved link", tc.name, got)
		}
	}
}
