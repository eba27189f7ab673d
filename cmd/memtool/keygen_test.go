package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
)

func TestKeygen(t *testing.T) {
	t.Parallel()
	out1, stderr, code := runBinary(t, "", "keygen")
	out2, _, _ := runBinary(t, "", "keygen")
	k1, err := encrypt.ParseKeys(out1)
	if code != 0 || stderr != "" || err != nil || len(k1) != 1 {
		t.Fatalf("keygen: exit %d, %q, stderr %q, %v", code, out1, stderr, err)
	}
	if out1 == out2 {
		t.Error("two keys are equal")
	}
	out, _, _ := runBinary(t, "", "keygen", "--id", "prod-2026")
	if keys, err := encrypt.ParseKeys(out); err != nil || keys[0].ID != "prod-2026" {
		t.Errorf("--id: %q, %v", out, err)
	}
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "bad id"); code != exitUsage || !strings.Contains(stderr, "key ID") {
		t.Errorf("bad --id: exit %d, %q", code, stderr)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "old", "--out", file); code != 0 {
		t.Fatalf("--out: exit %d, %q", code, stderr)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	first, _ := os.ReadFile(file)
	if _, _, code := runBinary(t, "", "keygen", "--out", file); code != exitFailed {
		t.Errorf("--out onto an existing file: exit %d", code)
	}
	if now, _ := os.ReadFile(file); string(now) != string(first) {
		t.Error("--out replaced an existing key file")
	}

	// A store written with the old key opens after rotation, and new writes
	// use the new key.
	getenv := func(k string) string { return map[string]string{"MEMTOOL_KEY_FILE": file}[k] }
	keys, err := encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
	if err != nil {
		t.Fatal(err)
	}
	inner := memstore.New()
	s, _ := encrypt.New(inner, keys, nil)
	ctx := context.Background()
	s.WriteFile(ctx, "a", []byte("text"), memtool.CreateOnly)

	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", file); code != 0 {
		t.Fatalf("--rotate: exit %d, %q", code, stderr)
	}
	keys, err = encrypt.LoadKeys(getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
	if err != nil || len(keys) != 2 || keys[0].ID != "new" || keys[1].ID != "old" {
		t.Fatalf("after --rotate: %v, %v", keys, err)
	}
	s, _ = encrypt.New(inner, keys, nil)
	if got, err := s.ReadFile(ctx, "a", 100); err != nil || string(got) != "text" {
		t.Errorf("old file after rotation: %q, %v", got, err)
	}
	if n, err := encrypt.Rekey(ctx, s); n != 1 || err != nil {
		t.Errorf("Rekey: %d, %v", n, err)
	}
	stored, _ := inner.ReadFile(ctx, "a", 200)
	if !strings.HasPrefix(string(stored[4:]), "new\x00") {
		t.Errorf("after Rekey the file names key %q", stored[4:20])
	}
	if _, _, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", file); code != exitFailed {
		t.Errorf("--rotate with an ID already there: exit %d", code)
	}
}

// TestKeygenRotateAtOnce: keygen --rotate run by several processes at once
// on one key file keeps every key each of them added (a key lost after a
// rekey used it would leave its files unreadable), and leaves no
// temporary file.
func TestKeygenRotateAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "first", "--out", file); code != 0 {
		t.Fatalf("--out: exit %d, %q", code, stderr)
	}
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, stderr, code := runBinary(t, "", "keygen", "--id", fmt.Sprintf("k%d", i), "--rotate", file); code != 0 {
				t.Errorf("rotate k%d: exit %d, %q", i, code, stderr)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := encrypt.ParseKeys(string(data))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, k := range keys {
		ids[k.ID] = true
	}
	for i := range n {
		if !ids[fmt.Sprintf("k%d", i)] {
			t.Errorf("key k%d is not in the key file after the rotations (keys: %v)", i, ids)
		}
	}
	if !ids["first"] || len(keys) != n+1 {
		t.Errorf("key file holds %d keys (%v), want first and the %d rotated in", len(keys), ids, n)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the key file's directory holds %d entries, want the key file alone", len(entries))
	}
}

// TestKeygenRotateThroughLink: --rotate of a key file named through a
// symbolic link (a secrets mount, a shared config) adds the key to the
// file the link leads to, and keeps the link, and the file's mode: a
// service that reads the file (through its group's permission) sees the
// new key, where a rotation that replaced the link with a file of its own
// would leave it the old keys alone.
func TestKeygenRotateThroughLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "secrets", "keys")
	if err := os.Mkdir(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "old", "--out", real); code != 0 {
		t.Fatalf("keygen: exit %d, %q", code, stderr)
	}
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "keys")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", link); code != 0 {
		t.Fatalf("--rotate: exit %d, %q", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v, %v", fi.Mode(), err)
	}
	data, _ := os.ReadFile(real)
	if keys, err := encrypt.ParseKeys(string(data)); err != nil || len(keys) != 2 {
		t.Errorf("the file the link leads to holds %d keys (%v), want 2", len(keys), err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the key file's mode after --rotate: %v, %v; want 0640 kept", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(real)); len(entries) != 1 {
		t.Errorf("left beside the key file: %v", entries)
	}
}
