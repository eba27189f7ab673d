package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
)

// memtool rekey --store https://… (a memtool server) refuses, before it
// reads anything, and says that rekeying is done on the server's own
// store: the server encrypts with its own keys, and what the client sees
// is the text. Without the refusal, a memory whose text happens to be a
// file sealed with a key the client has (here 0.md, an encrypted file
// kept as a memory) was decrypted and sealed again with the client's new
// key, changing the memory, before the rekey failed on the next file.
func TestRekeyRemoteStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "served")
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	serverKey, _ := encrypt.NewKey("server")
	served, _ := encrypt.New(fs, []encrypt.Key{serverKey}, nil)
	oldKey, _ := encrypt.NewKey("old")
	newKey, _ := encrypt.NewKey("new")
	// A sealed file, as the client's old key seals it, kept as a memory.
	mem := memstore.New()
	sealer, _ := encrypt.New(mem, []encrypt.Key{oldKey}, nil)
	sealer.WriteFile(ctx, "x", []byte("kept as it is"), memtool.CreateOnly)
	blob, _ := mem.ReadFile(ctx, "x", 1<<20)
	for name, data := range map[string][]byte{"0.md": blob, "a.md": []byte("alpha")} {
		if err := served.WriteFile(ctx, name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	url := remotetest.Server(t, served, remoteToken)
	before := diskTree(t, dir)

	env := append(remoteEnv(), "MEMTOOL_KEY="+newKey.Text()+","+oldKey.Text())
	for _, args := range [][]string{{}, {"--all-tenants"}, {"--tenant", "alice"}} {
		args = append([]string{"rekey", "--store", url}, args...)
		out, stderr, code := runMemtool(t, env, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "is a memtool server") ||
			!strings.Contains(stderr, "on the server's own store") || !strings.Contains(stderr, "Nothing was changed") {
			t.Errorf("memtool %s: exit %d, stdout %q, stderr %q; want exit %d and a refusal", strings.Join(args, " "), code, out, stderr, exitUsage)
		}
	}
	// Without keys it says the same, not that keys are missing.
	if _, stderr, code := runMemtool(t, remoteEnv(), "", "rekey", "--store", url); code != exitUsage || !strings.Contains(stderr, "on the server's own store") {
		t.Errorf("rekey of a server without keys: exit %d, %q", code, stderr)
	}
	if after := diskTree(t, dir); !slices.Equal(after, before) {
		t.Errorf("the server's store changed:\n%v\nwant\n%v", after, before)
	}
	if got, err := served.ReadFile(ctx, "0.md", 1<<20); err != nil || string(got) != string(blob) {
		t.Errorf("0.md on the server is now %q, %v", got, err)
	}
}
