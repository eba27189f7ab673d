package turn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
