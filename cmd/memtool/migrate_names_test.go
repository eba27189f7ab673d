package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// walkNames lists every entry of the memory at url (tenant-less), as the
// store lists them.
func walkNames(t *testing.T, url string) []string {
	t.Helper()
	var out []string
	err := memtool.Walk(context.Background(), openTestStore(t, url, ""), "", func(n string, fi memtool.FileInfo) error {
		if n != "" {
			out = append(out, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateRefusesNamesTheTargetCannotHold: a name the source holds
// and the target's kind of store cannot (a component over 255 bytes in a
// directory, a name that is not UTF-8 in PostgreSQL or S3, a key over
// 1024 bytes in S3, a file ending in .attrs in file+blob) is refused
// before the target is opened, naming it: migrate once wrote the
// directories and the files before it, then failed (a partial copy), and
// S3 stored a name that is not UTF-8 under another name (U+FFFD for the
// byte) while migrate reported success.
func TestMigrateRefusesNamesTheTargetCannotHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := strings.Repeat("l", 256) + ".md"
	b250 := strings.Repeat("b", 250)
	deep := strings.Join([]string{b250, b250, b250, b250, "key-of-more-than-1024-bytes.md"}, "/")
	cases := []struct {
		name, source, bad string
		targets           []string // backends: dir, file+blob, s3, pg
	}{
		{"component over 255 bytes", "sqlite", "a/" + long, []string{"dir", "file+blob"}},
		{"not UTF-8", "dir", "a/bad\xff.md", []string{"s3", "pg"}},
		{"key over 1024 bytes", "sqlite", deep, []string{"s3"}},
		{".attrs", "dir", "a/x.attrs", []string{"file+blob"}},
	}
	for _, c := range cases {
		for _, kind := range c.targets {
			t.Run(c.name+" into "+kind, func(t *testing.T) {
				t.Parallel()
				tmp := t.TempDir()
				src := filepath.Join(tmp, "src")
				if c.source == "sqlite" {
					src = "sqlite://" + filepath.Join(tmp, "src.db")
				}
				s := openTestStore(t, src, "")
				if err := s.WriteFile(ctx, "a.md", []byte("first"), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
				if _, err := memtool.MkdirAll(ctx, s, filepath.Dir(c.bad)); err != nil {
					t.Fatal(err)
				}
				if err := s.WriteFile(ctx, c.bad, []byte("the odd one"), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
				var dst string
				switch kind {
				case "dir":
					dst = filepath.Join(tmp, "dst")
				case "file+blob":
					dst = "file+blob://" + filepath.Join(tmp, "bucket")
				case "s3":
					dst = s3URL(t, "team/memory")
				case "pg":
					dst = pgtest.URL(t)
				}
				out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst)
				if code != exitFailed || out != "" || !strings.Contains(stderr, strconv.Quote(shownName(c.bad))) {
					t.Errorf("exit %d, want %d naming %q\nstdout: %s\nstderr: %.600s", code, exitFailed, shownName(c.bad), out, stderr)
				}
				switch kind {
				case "dir", "file+blob":
					p, _ := storeurlPath(dst)
					if _, err := os.Stat(p); err == nil {
						t.Errorf("the refused migration created the target %s", p)
					}
				default:
					if names := walkNames(t, dst); len(names) > 0 {
						t.Errorf("the refused migration wrote %.300q", names)
					}
				}
			})
		}
	}
}

func storeurlPath(u string) (string, bool) {
	if strings.HasPrefix(u, "file+blob://") {
		return strings.TrimPrefix(u, "file+blob://"), true
	}
	return u, true
}

// TestMigrateRefusesUnseenEntries: a directory made by other tools (here
// the SDK helper's) may hold, below the root, what the file store does
// not show: a name starting with ".memtool", a symbolic link (leading
// out of the store or not). Migrate could not copy them, and once left
// them behind and reported success; it refuses, naming each, and writes
// nothing.
func TestMigrateRefusesUnseenEntries(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base")
	notes := filepath.Join(base, "memories", "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{".memtoolrc": "my config\n", "a.md": "hi\n", "../../outside.md": "out\n"} {
		if err := os.WriteFile(filepath.Join(notes, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../outside.md", filepath.Join(notes, "link.md")); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(tmp, "copy")
	out, stderr, code := runCLI(t, nil, "", "migrate", "--from", "helper:"+base, "--to", to)
	for _, want := range []string{"notes/.memtoolrc (a name starting with .memtool", "notes/link.md (a symbolic link", "holds 2 entries that the file store does not show"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("migrate: stderr %q lacks %q", stderr, want)
		}
	}
	if code != exitFailed || out != "" {
		t.Errorf("migrate: exit %d, stdout %q; want it refused", code, out)
	}
	if _, err := os.Stat(to); err == nil {
		t.Errorf("the refused migrate made the target")
	}
	// Once they are out of the way, the memory is copied.
	os.Remove(filepath.Join(notes, "link.md"))
	os.Rename(filepath.Join(notes, ".memtoolrc"), filepath.Join(notes, "memtoolrc"))
	mustRunCLI(t, nil, "", "migrate", "--from", "helper:"+base, "--to", to)
	if data, err := os.ReadFile(filepath.Join(to, "notes", "memtoolrc")); err != nil || string(data) != "my config\n" {
		t.Errorf("the copy's notes/memtoolrc: %q, %v", data, err)
	}
}
