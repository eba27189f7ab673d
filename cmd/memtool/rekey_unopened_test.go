package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// A rekey that meets a file that does not open with any key it has (a key
// missing from the key file, a damaged file) fails, naming the file, and
// says what to do about it: running rekey again, which the message for a
// store that keeps changing advises, would meet the same file.
func TestRekeyFileThatDoesNotOpen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	oldKey, _ := encrypt.NewKey("old")
	lost, _ := encrypt.NewKey("lost")
	runThrough(t, dir, encryptedWith(t, oldKey), `{"command":"create","path":"/memories/a.md","file_text":"alpha"}`)
	runThrough(t, dir, encryptedWith(t, lost), `{"command":"create","path":"/memories/b.md","file_text":"beta"}`)

	keyFile := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(keyFile, []byte(oldKey.Text()+"\n"), 0o600)
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	_, stderr, code := runMemtoolEnv(t, []string{"MEMTOOL_KEY_FILE=" + keyFile}, "rekey", "--store", dir)
	if code == 0 || !strings.Contains(stderr, "/memories/b.md") || strings.Contains(stderr, "until it succeeds") ||
		!strings.Contains(stderr, "does not open with any of these keys") {
		t.Errorf("rekey with a file under a key not in the key file: exit %d, %q", code, stderr)
	}
}
