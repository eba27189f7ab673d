package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storeurl"
)

// What memtool migrate checks of its source before it opens the target:
// that the source holds nothing it would leave behind unseen, and that it
// does not overlap the target.

// checkDiskNames refuses a directory store whose directory holds what the
// file store does not show, so that walkMemory cannot see it and migrate
// would leave it behind without a word: beside the memory, an entry of a
// policy this memtool does not know; anywhere in the memory, a name
// starting with ".memtool" (the file store keeps those for itself), a
// symbolic link (the file store follows none) or anything else that is
// not a file or a directory. What the file store itself left (a crashed
// writer's temporary file) is not a memory and is not named. Other stores
// are checked by walkMemory, as far as they list such names.
func checkDiskNames(raw, tenant string) error {
	dir, ok := storeurl.Dir(raw)
	if !ok || strings.HasPrefix(raw, "file+blob:") {
		return nil
	}
	if tenant != "" {
		dir = filepath.Join(dir, filestore.TenantsDir, tenant)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // opening the store has already told what is wrong
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".memtool") && !filestore.OwnName(n) && n != recordName && !slices.Contains(policyData, n) {
			return fmt.Errorf("holds %s, which this memtool does not know; migrate cannot carry it", n)
		}
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // WalkDir does not enter a link
	}
	var unseen []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil // opening or reading the store tells what is wrong
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		own := strings.HasPrefix(d.Name(), ".memtool")
		why := ""
		switch {
		case own && (!strings.Contains(rel, "/") || filestore.OwnName(d.Name())):
			// Policy data and the store's own, checked above; or what the
			// file store left in a directory of the memory.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case own:
			why = "a name starting with .memtool, which the file store keeps for itself"
		case d.Type()&fs.ModeSymlink != 0:
			why = "a symbolic link, which the file store does not follow"
		case !d.IsDir() && !d.Type().IsRegular():
			why = "neither a file nor a directory"
		}
		if why != "" {
			unseen = append(unseen, fmt.Sprintf("%s (%s)", shownName(rel), why))
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if len(unseen) > 0 {
		n := len(unseen)
		if n > 10 {
			unseen = append(unseen[:10], fmt.Sprintf("and %d more", n-10))
		}
		return fmt.Errorf("holds %s that the file store does not show, so migrate would leave %s behind: %s; rename %s, or put the file a link points to in its place, and migrate again",
			plural(n, "entry", "entries"), pick(n, "it", "them"), strings.Join(unseen, ", "), pick(n, "it", "them"))
	}
	return nil
}

// checkTenantsDir refuses, for migrate and rekey --all-tenants, a
// directory store whose tenants directory holds what the file store does
// not list as a tenant: a name that is no tenant ID, a symbolic link (to
// a tenant's directory kept elsewhere, say), a file. Copying or rekeying
// every tenant listed would leave it behind without a word. missed says
// what the command would do to them, with a %s for "it" or "them".
func checkTenantsDir(raw, missed string) error {
	dir, ok := storeurl.Dir(raw)
	if !ok || strings.HasPrefix(raw, "file+blob:") {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, filestore.TenantsDir))
	if err != nil {
		return nil // no tenants directory; or listing the tenants has told what is wrong
	}
	var unseen []string
	for _, e := range entries {
		why := ""
		switch {
		case filestore.OwnName(e.Name()):
			continue
		case e.Type()&fs.ModeSymlink != 0:
			why = "a symbolic link, which the file store does not follow"
		case !e.IsDir():
			why = "not a directory"
		case memtool.ValidateTenant(e.Name()) != nil:
			why = "not a tenant ID"
		default:
			continue
		}
		unseen = append(unseen, fmt.Sprintf("%q (%s)", e.Name(), why))
	}
	if len(unseen) == 0 {
		return nil
	}
	n := len(unseen)
	if n > 10 {
		unseen = append(unseen[:10], fmt.Sprintf("and %d more", n-10))
	}
	return fmt.Errorf("holds %s in %s that the file store does not list as %s, so %s: %s; move %s out of %s (or put the directory a link points to in its place, or rename a directory to its tenant ID), and run it again",
		plural(n, "entry", "entries"), filestore.TenantsDir, pick(n, "a tenant", "tenants"), fmt.Sprintf(missed, pick(n, "it", "them")), strings.Join(unseen, ", "), pick(n, "it", "them"), filestore.TenantsDir)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// localDir returns the directory of a directory store's URL.
func localDir(raw string) (string, bool) {
	scheme, _, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") {
		return raw, true
	}
	if scheme == "file" {
		if u, err := url.Parse(raw); err == nil {
			return u.Path, true
		}
	}
	return "", false
}

// overlap reports whether the stores from and to are kept on this machine
// in the same place, or one inside the other (a directory store in the
// other's directory, say), however their URLs spell it, or share keys in
// a bucket (sharedKeys): a copy from one into the other would change the
// source.
func overlap(from, to string) bool {
	if sharedKeys(from, to) {
		return true
	}
	a, okA := storeurl.Path(from)
	b, okB := storeurl.Path(to)
	if !okA || !okB {
		return false
	}
	a, b = realPath(a), realPath(b)
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil && os.SameFile(fa, fb) {
			return true
		}
	}
	return inside(a, b) || inside(b, a)
}

// inside reports whether path is dir or lies below it.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath returns p made absolute with the symbolic links of the part of
// it that exists resolved.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for q := abs; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return abs
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}
