package storeurl

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// parse finds the row of rawURL's scheme and parses the URL by it.
func parse(rawURL string) (scheme, target, error) {
	t := target{raw: rawURL}
	name, _, hasScheme := strings.Cut(rawURL, ":")
	if !hasScheme || len(name) < 2 || strings.ContainsAny(name, "/.") {
		// A plain path (a one-letter "scheme" would be a Windows drive).
		p, err := expandHome(rawURL)
		t.path = p
		return plainPath, t, err
	}
	for _, row := range registry {
		if !slices.Contains(row.names, name) {
			continue
		}
		var err error
		if row.parse != nil {
			t.path, err = row.parse(row, rawURL)
		}
		return row, t, err
	}
	var known []string
	for _, row := range registry {
		known = append(known, row.names[0])
	}
	return scheme{}, t, fmt.Errorf("store URL %q: unknown scheme %q (known: %s, or a plain directory path)", rawURL, name, strings.Join(known, ", "))
}

// absPath is the path of a file:, sqlite: or file+blob: URL, which must be
// absolute (or start at the home directory: scheme://~/path). Such a URL
// takes no user, no fragment and (but for file+blob:, whose query
// objectstore reads and checks) no query: none of them would be used, so
// one written expecting it to do something (?tenant=, a pragma) fails
// rather than opening the store without it.
func absPath(row scheme, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("store URL %q: %v", raw, err)
	}
	what := "a " + u.Scheme
	if u.Scheme == "sqlite" {
		what = "an SQLite"
	}
	switch {
	case u.User != nil:
		return "", fmt.Errorf("store URL %q: %s URL takes no user or password, as in %s", raw, what, row.form)
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return "", fmt.Errorf("store URL %q: %s URL takes no fragment (#…), as in %s", raw, what, row.form)
	case u.RawQuery != "" && u.Scheme != "file+blob" || u.ForceQuery:
		return "", fmt.Errorf("store URL %q: %s URL takes no query (?…), as in %s", raw, what, row.form)
	}
	if u.Host == "~" {
		return expandHome("~" + u.Path)
	}
	if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("store URL %q: %s URL needs an absolute path, as in %s", raw, what, row.form)
	}
	return u.Path, nil
}

// helperDir is the directory of the Python or TypeScript SDK's memory
// helper whose base directory is given: helper:./memory. It is
// <base>/memories, as claude.HelperDir says; written out here so that
// storeurl (and every program that opens store URLs) does not link the
// Anthropic SDK for one path join. TestHelperDirIsClaudes holds the two
// together.
func helperDir(_ scheme, raw string) (string, error) {
	_, rest, _ := strings.Cut(raw, ":")
	if rest == "" {
		return "", fmt.Errorf("store URL %q: give the helper's base directory, as in helper:./memory", raw)
	}
	base, err := expandHome(rest)
	return filepath.Join(base, "memories"), err
}

func noRest(_ scheme, raw string) (string, error) {
	if _, rest, _ := strings.Cut(raw, ":"); rest != "" {
		return "", fmt.Errorf("store URL %q: mem: takes nothing after the colon", raw)
	}
	return "", nil
}

// expandHome replaces a leading ~ (alone or before a slash) with the home
// directory; ~user is left as it is.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store %q: %v", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}
