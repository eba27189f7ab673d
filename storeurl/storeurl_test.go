package storeurl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storeurl"
)

// open opens url with opts, failing t on an error; the store is closed
// when t ends.
func open(t *testing.T, url string, opts *storeurl.Options) memtool.Store {
	t.Helper()
	s, closer, err := storeurl.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() { closer.Close() })
	return s
}

// TestOpenEveryScheme opens a new store of every scheme, writes a file,
// and (but for the in-memory ones) reopens it, without Create, to read it.
func TestOpenEveryScheme(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		url     string
		created string // the local file or directory Open creates
		lasting bool   // a second Open sees the first one's file
	}{
		{filepath.Join(tmp, "plain", "memories"), filepath.Join(tmp, "plain", "memories"), true},
		{"file://" + filepath.Join(tmp, "file"), filepath.Join(tmp, "file"), true},
		{"helper:" + filepath.Join(tmp, "helper"), filepath.Join(tmp, "helper", "memories"), true},
		{"mem:", "", false},
		{"sqlite://" + filepath.Join(tmp, "new", "folder", "m.db"), filepath.Join(tmp, "new", "folder", "m.db"), true},
		{"mem+blob://", "", false},
		{"file+blob://" + filepath.Join(tmp, "bucket"), filepath.Join(tmp, "bucket"), true},
		{"postgres", "", true},
		{"s3", "", true},
	} {
		name, _, _ := strings.Cut(c.url, ":")
		if strings.HasPrefix(c.url, "/") {
			name = "plain path"
		}
		t.Run(name, func(t *testing.T) {
			url := c.url
			switch url {
			case "postgres":
				url = pgtest.URL(t)
			case "s3":
				url = backendtest.S3URL(t, "p")
			}
			s := open(t, url, &storeurl.Options{Create: true})
			if err := s.WriteFile(t.Context(), "a.md", []byte("hello"), memtool.Replace); err != nil {
				t.Fatal(err)
			}
			if c.created != "" {
				if _, err := os.Stat(c.created); err != nil {
					t.Errorf("Open did not create %s: %v", c.created, err)
				}
			}
			if !c.lasting {
				return
			}
			data, err := open(t, url, nil).ReadFile(t.Context(), "a.md", 100)
			if string(data) != "hello" || err != nil {
				t.Errorf("reopened: %q, %v", data, err)
			}
		})
	}
}

// TestOpenDoesNotCreate: without Create, a missing local target is an
// error wrapping os.ErrNotExist, and is still missing after.
func TestOpenDoesNotCreate(t *testing.T) {
	tmp := t.TempDir()
	for url, path := range map[string]string{
		filepath.Join(tmp, "dir"):                     filepath.Join(tmp, "dir"),
		"file://" + filepath.Join(tmp, "file"):        filepath.Join(tmp, "file"),
		"helper:" + filepath.Join(tmp, "helper"):      filepath.Join(tmp, "helper"),
		"sqlite://" + filepath.Join(tmp, "x", "m.db"): filepath.Join(tmp, "x"),
		"file+blob://" + filepath.Join(tmp, "bucket"): filepath.Join(tmp, "bucket"),
	} {
		_, _, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: "t1"})
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("Open(%q) without Create: %v, want an error wrapping os.ErrNotExist", url, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open(%q) without Create made %s", url, path)
		}
	}
}

// TestHomeIsExpanded: ~ and ~/x are the home directory, in a plain path
// and in the URLs of local stores.
func TestHomeIsExpanded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for url, path := range map[string]string{
		"~/plain":              "plain",
		"file://~/file":        "file",
		"helper:~/helper":      "helper/memories",
		"sqlite://~/db/m.db":   "db/m.db",
		"file+blob://~/bucket": "bucket",
	} {
		open(t, url, &storeurl.Options{Create: true})
		if _, err := os.Stat(filepath.Join(home, path)); err != nil {
			t.Errorf("Open(%q): %v", url, err)
		}
	}
	if _, err := os.Stat("~"); err == nil {
		t.Error("a directory named ~ was made")
	}
}

// TestBadURLs: a URL no row can open says how it is written.
func TestBadURLs(t *testing.T) {
	for url, want := range map[string]string{
		"ftp://x/y":                `unknown scheme "ftp" (known: file, helper, mem, sqlite, postgres, s3, gs, azblob, mem+blob, file+blob, https, or a plain directory path)`,
		"mem:x":                    "mem: takes nothing after the colon",
		"sqlite://host/m.db":       "an SQLite URL needs an absolute path, as in sqlite:///abs/path.db",
		"sqlite:///m.db?mode=ro":   "an SQLite URL takes no query",
		"sqlite:relative.db":       "an SQLite URL needs an absolute path",
		"file://host/dir":          "a file URL needs an absolute path, as in file:///abs/dir",
		"file+blob://relative/dir": "a file+blob URL needs an absolute path, as in file+blob:///abs/dir",
		"helper:":                  "give the helper's base directory, as in helper:./memory",
		"s3://?region=us-east-1":   "no bucket name",
		"mem+blob://host":          "takes only a prefix",
	} {
		_, _, err := storeurl.Open(t.Context(), url, &storeurl.Options{Create: true})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q): %v, want %q", url, err, want)
		}
	}
	if _, _, err := storeurl.Open(t.Context(), "mem:", &storeurl.Options{Tenant: "a"}); err == nil {
		t.Error("mem: opened a tenant")
	}
}

// TestSchemes: the help text names every scheme the registry opens.
func TestSchemes(t *testing.T) {
	help := strings.Join(storeurl.Schemes(), "\n")
	for _, scheme := range []string{"DIR", "file:", "helper:", "mem:", "sqlite:", "postgres:", "s3:", "gs:", "azblob:", "mem+blob:", "file+blob:"} {
		if !strings.Contains(help, scheme) {
			t.Errorf("Schemes() lacks %s:\n%s", scheme, help)
		}
	}
}

// TestKind: every scheme says what it is, from the same row that opens it.
func TestKind(t *testing.T) {
	for url, want := range map[string]string{
		"./memories":              "a directory",
		"~/notes":                 "a directory",
		"file:///m":               "a directory",
		"helper:./memory":         "a directory of the SDK memory helper",
		"mem:":                    "in memory, gone when the process exits",
		"sqlite:///m.db":          "an SQLite file",
		"postgres://u@h/db":       "a PostgreSQL database",
		"postgresql://u@h/db":     "a PostgreSQL database",
		"s3://b?region=eu-west-1": "object storage (S3)",
		"mem+blob://":             "object storage in memory, gone when the process exits",
		"redis://h":               "unknown",
		"sqlite://relative.db":    "unknown",
	} {
		if got := storeurl.Kind(url); got != want {
			t.Errorf("Kind(%q) = %q, want %q", url, got, want)
		}
	}
}

// TestDirAndPath: the stores kept on this machine name their file or
// directory (Path), those kept in a directory that directory (Dir), ~
// expanded; others none.
func TestDirAndPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	for url, want := range map[string]struct{ dir, path string }{
		"./memories":        {"./memories", "./memories"},
		"~/notes":           {filepath.Join(home, "notes"), filepath.Join(home, "notes")},
		"file:///m":         {"/m", "/m"},
		"file+blob:///b":    {"/b", "/b"},
		"sqlite:///m.db":    {"", "/m.db"},
		"sqlite://~/m.db":   {"", filepath.Join(home, "m.db")},
		"helper:/base":      {"/base/memories", "/base/memories"},
		"postgres://u@h/db": {},
		"s3://b":            {},
		"mem:":              {},
		"redis://h":         {},
		"sqlite://m.db":     {},
	} {
		if got, ok := storeurl.Dir(url); got != want.dir || ok != (want.dir != "") {
			t.Errorf("Dir(%q) = %q, %v; want %q", url, got, ok, want.dir)
		}
		if got, ok := storeurl.Path(url); got != want.path || ok != (want.path != "") {
			t.Errorf("Path(%q) = %q, %v; want %q", url, got, ok, want.path)
		}
	}
}

// TestTenantsAndIsEmpty lists the tenants of each multi-tenant local
// store and asks whether its memories are empty.
func TestTenantsAndIsEmpty(t *testing.T) {
	ctx := t.Context()
	tmp := t.TempDir()
	for _, url := range []string{
		filepath.Join(tmp, "dir"),
		"sqlite://" + filepath.Join(tmp, "m.db"),
		"file+blob://" + filepath.Join(tmp, "bucket"),
	} {
		isEmpty := func(tenant string, want bool) {
			t.Helper()
			if got, err := storeurl.IsEmpty(ctx, url, tenant); got != want || err != nil {
				t.Errorf("IsEmpty(%q, %q) = %v, %v; want %v", url, tenant, got, err, want)
			}
		}
		isEmpty("", true) // missing
		isEmpty("a", true)
		if _, err := storeurl.Tenants(ctx, url); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Tenants(%q) of a missing store: %v", url, err)
		}
		for _, id := range []string{"b", "a"} {
			s := open(t, url, &storeurl.Options{Tenant: id, Create: true})
			if err := s.WriteFile(ctx, "x.md", []byte(id), memtool.Replace); err != nil {
				t.Fatal(err)
			}
		}
		ids, err := storeurl.Tenants(ctx, url)
		if strings.Join(ids, " ") != "a b" || err != nil {
			t.Errorf("Tenants(%q) = %q, %v", url, ids, err)
		}
		isEmpty("", false)
		isEmpty("a", false)
		isEmpty("c", true)
		if ids, _ := storeurl.Tenants(ctx, url); len(ids) != 2 {
			t.Errorf("IsEmpty of tenant c made it a tenant: %q", ids)
		}
	}
	// A single-tenant store has no tenants to list.
	single := filepath.Join(tmp, "single")
	if err := open(t, single, &storeurl.Options{Create: true}).WriteFile(ctx, "x.md", nil, memtool.Replace); err != nil {
		t.Fatal(err)
	}
	if _, err := storeurl.Tenants(ctx, single); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenants of a single-tenant store: %v", err)
	}
	if empty, err := storeurl.IsEmpty(ctx, single, ""); empty || err != nil {
		t.Errorf("IsEmpty of a single-tenant store with a file: %v, %v", empty, err)
	}
	if _, err := storeurl.Tenants(ctx, "mem:"); err == nil || !strings.Contains(err.Error(), "cannot list its tenants") {
		t.Errorf("Tenants(mem:): %v", err)
	}
}

func TestMain(m *testing.M) {
	// No test may reach a real cloud's credentials.
	for _, v := range []string{"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY"} {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}
