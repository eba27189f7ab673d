package encrypt_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// TestLoadKeysFileSwapped: LoadKeys checks the mode of the file it reads.
// While it runs, the key file is swapped again and again (by a rename,
// as an editor or a script replaces a file) between one of mode 0600 and
// one readable by others; LoadKeys must never return the keys of the
// latter. A check of the name followed by a read of the name could see
// the first file and read the second; checking the open file cannot. The
// swaps make the test likely, not certain, to catch that mistake; it
// never fails on correct code.
func TestLoadKeysFileSwapped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "keys")
	private, shared := filepath.Join(dir, "private"), filepath.Join(dir, "shared")
	for file, id := range map[string]string{private: "private", shared: "shared"} {
		if err := os.WriteFile(file, []byte(newKey(t, id).Text()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(private, name); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(dir, "tmp")
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			from := private
			if i%2 == 1 {
				from = shared
			}
			if err := os.Link(from, tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, name); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)

	getenv := func(k string) string { return map[string]string{"KEY_FILE": name}[k] }
	loaded := 0
	for range 20000 {
		keys, err := encrypt.LoadKeys(getenv, "KEY", "KEY_FILE")
		if err != nil {
			continue // the file readable by others, refused
		}
		loaded++
		if keys[0].ID != "private" {
			t.Fatalf("LoadKeys returned the keys of a file readable by others")
		}
	}
	if loaded == 0 {
		t.Error("LoadKeys never read the private key file")
	}
}

// TestLoadKeysSymlink: a key file named through a symlink (as a
// Kubernetes secret volume mounts its files) is judged by the file it
// reads: accepted when that file has mode 0600, refused when it is
// readable by others, whatever the link's own mode.
func TestLoadKeysSymlink(t *testing.T) {
	dir := t.TempDir()
	key := newKey(t, "linked")
	target, link := filepath.Join(dir, "..data-keys"), filepath.Join(dir, "keys")
	if err := os.WriteFile(target, []byte(key.Text()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(target), link); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"KEY_FILE": link}[k] }
	if keys, err := encrypt.LoadKeys(getenv, "KEY", "KEY_FILE"); err != nil || len(keys) != 1 || keys[0] != key {
		t.Errorf("a symlink to a key file of mode 0600: %v, %v", keys, err)
	}
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	if keys, err := encrypt.LoadKeys(getenv, "KEY", "KEY_FILE"); err == nil {
		t.Errorf("a symlink to a key file readable by its group: accepted %d keys", len(keys))
	}
}

// TestLoadKeysFileVariableHoldsKey: the key file variable set to the keys
// themselves (the two variables swapped) is an error that does not
// repeat them: the open error names the file, and the name here is the
// secret, which would land on a terminal, in a CI log or the journal.
func TestLoadKeysFileVariableHoldsKey(t *testing.T) {
	k1, k2 := newKey(t, "prod"), newKey(t, "old")
	for _, value := range []string{
		k1.Text(),
		k1.Text() + "\n" + k2.Text() + "\n",
		k1.Text()[:len(k1.Text())-3], // cut short: not a valid key either
		"/no/such/dir/" + k1.Text(),
	} {
		getenv := func(k string) string { return map[string]string{"MEMTOOL_KEY_FILE": value}[k] }
		_, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
		if err == nil {
			t.Fatalf("a key file named %q was read", value)
		}
		secret1 := strings.TrimPrefix(k1.Text(), "prod:")
		if msg := err.Error(); strings.Contains(msg, secret1[:12]) || strings.Contains(msg, strings.TrimPrefix(k2.Text(), "old:")[:12]) {
			t.Errorf("the error gives the key away: %s", msg)
		} else if !strings.Contains(msg, "MEMTOOL_KEY_FILE") {
			t.Errorf("the error does not say which variable is wrong: %s", msg)
		}
	}
	// A file name that is no key is still named.
	missing := filepath.Join(t.TempDir(), "keys")
	getenv := func(k string) string { return map[string]string{"MEMTOOL_KEY_FILE": missing}[k] }
	if _, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing key file: %v; want its name", err)
	}
}
