package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// TestRekeyReport: rekey prints how many files it re-encrypted (none when
// every file is already under the new key), and says the other keys can
// be removed only when it succeeded; when it fails, it says to keep them.
func TestRekeyReport(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	var keys [3]encrypt.Key
	for i, id := range []string{"new", "old", "gone"} {
		keys[i], _ = encrypt.NewKey(id)
	}
	runThrough(t, dir, encryptedWith(t, keys[1]),
		`{"command":"create","path":"/memories/a.md","file_text":"alpha"}`,
		`{"command":"create","path":"/memories/d/b.md","file_text":"beta"}`,
	)
	rekey := func(keys ...encrypt.Key) (stdout, stderr string, code int) {
		var text []string
		for _, k := range keys {
			text = append(text, k.Text())
		}
		return runMemtoolEnv(t, []string{"MEMTOOL_KEY=" + strings.Join(text, ",")}, "rekey", "--store", dir)
	}
	const canGo = "The other keys (old) can be removed"
	for _, want := range []string{"re-encrypted 2 files with key new\n", "re-encrypted 0 files with key new\n"} {
		if out, stderr, code := rekey(keys[0], keys[1]); code != 0 || out != want || !strings.Contains(stderr, canGo) {
			t.Errorf("rekey: exit %d, %q, %q; want %q and %q", code, out, stderr, want, canGo)
		}
	}

	// A file under a key that is not configured stops rekey.
	runThrough(t, dir, encryptedWith(t, keys[2]), `{"command":"create","path":"/memories/c.md","file_text":"gamma"}`)
	out, stderr, code := rekey(keys[0], keys[1])
	if code != exitFailed || out != "re-encrypted 0 files with key new\n" ||
		!strings.Contains(stderr, `key "gone"`) || !strings.Contains(stderr, "keep the other keys") || strings.Contains(stderr, "can be removed") ||
		!strings.HasPrefix(stderr, "memtool rekey: The file /memories/c.md") {
		t.Errorf("rekey over a file under an unknown key: exit %d, %q, %q", code, out, stderr)
	}

	// With the new key alone there is nothing to remove.
	runThrough(t, dir, encryptedWith(t, keys[2]), `{"command":"delete","path":"/memories/c.md"}`)
	if out, stderr, code := rekey(keys[0]); code != 0 || out != "re-encrypted 0 files with key new\n" || stderr != "" {
		t.Errorf("rekey with one key: exit %d, %q, %q", code, out, stderr)
	}
}
