package storeurl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestLocalURLOptionsRefused: the URL of a directory or an SQLite file
// takes no options, user or fragment, wherever its path starts (the root
// or ~), so that one a user wrote expecting it to do something (a tenant,
// a pragma, a mode) fails rather than opening the store without it: a
// file:///srv/mem?tenant=alice once opened the tenant-less memory, and
// sqlite://~/m.db?_pragma=synchronous(OFF) once opened with the option
// dropped, while sqlite:///abs/m.db?… was refused. Nothing is created.
func TestLocalURLOptionsRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tmp := t.TempDir()
	for _, raw := range []string{
		"file://" + filepath.Join(tmp, "a") + "?tenant=alice",
		"file://~/b?tenant=alice",
		"file://" + filepath.Join(tmp, "c") + "#alice",
		"file://bob@localhost" + filepath.Join(tmp, "d"),
		"sqlite://~/e.db?_pragma=synchronous(OFF)",
		"sqlite://" + filepath.Join(tmp, "f.db") + "#mode=ro",
		"sqlite://bob:pw12@~/g.db",
		"file+blob://bob:pw12@~/h",
		"file+blob://" + filepath.Join(tmp, "i") + "#x",
	} {
		s, closer, err := storeurl.Open(t.Context(), raw, &storeurl.Options{Create: true})
		if err == nil {
			closer.Close()
			t.Errorf("Open(%q) opened %T, want an error", raw, s)
			continue
		}
		if strings.Contains(err.Error(), "pw12") {
			t.Errorf("Open(%q): %v shows the password", raw, err)
		}
		if !strings.Contains(err.Error(), "takes no") {
			t.Errorf("Open(%q): %v, want it to say what the URL takes no more of", raw, err)
		}
	}
	for _, dir := range []string{home, tmp} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("a refused URL left %v in %s", entries, dir)
		}
	}
}
