package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
)

// How memtool migrate plans, copies and verifies one memory.

// openSource opens the source of m, which close closes.
func (m *migration) openSource(ctx context.Context, from string) error {
	src, closer, err := openStore(ctx, from, m.tenant, false)
	if err != nil {
		return err
	}
	m.src = src
	m.closers = append(m.closers, closer)
	return nil
}

// openTarget opens the target of m, which close closes; create creates it
// if it does not exist.
func (m *migration) openTarget(ctx context.Context, to string, create bool) error {
	dst, closer, err := openStore(ctx, to, m.tenant, create)
	if err != nil {
		return err
	}
	m.dst = dst
	m.closers = append(m.closers, closer)
	return nil
}

// layer sets m.dstLayer over the open target: the target, or, if
// --to-policy turns encryption on, the target encrypted with m.keys.
func (m *migration) layer() error {
	m.dstLayer = m.dst
	if m.keys != nil {
		var err error
		m.dstLayer, err = encrypt.New(m.dst, m.keys, &encrypt.Options{Tenant: m.tenant})
		return err
	}
	return nil
}

// plan is what a source holds (the memory and its policies' data, as
// wholeStore shows them): its directories (parents before children) and
// its files, and the files' total size; policy counts the entries of
// policies' data among them.
type plan struct {
	dirs   []string
	files  []string
	bytes  int64
	policy int
}

func planCopy(ctx context.Context, src memtool.Store) (*plan, error) {
	p := &plan{}
	err := memtool.Walk(ctx, &wholeView{src}, "", func(name string, e memtool.FileInfo) error {
		if name == "" {
			return nil // the root, which every store has
		}
		if strings.HasPrefix(name, ".memtool") {
			p.policy++
		}
		switch {
		case e.IsDir():
			p.dirs = append(p.dirs, name)
		case e.IsRegular():
			p.files = append(p.files, name)
			p.bytes += e.Size
		default:
			return fmt.Errorf("%s is neither a file nor a directory; memtool cannot copy it", shownName(name))
		}
		return nil
	})
	return p, err
}

type migrateSummary struct {
	files, dirs, policy int
	bytes               int64
}

func (s *migrateSummary) add(o migrateSummary) {
	s.files += o.files
	s.dirs += o.dirs
	s.policy += o.policy
	s.bytes += o.bytes
}

// copyStore copies the plan from src to dst, then reads every file back
// from dst and compares its SHA-256 with the source's, and checks that
// the source still holds what it copied. Without force it
// creates only (a file that appeared in the target meanwhile is an error);
// with force it replaces files and keeps directories that are there. The
// summary counts the memory's files and directories, and the entries of
// policies' data apart.
func copyStore(ctx context.Context, src, dst memtool.Store, p *plan, force bool, prog *progress) (migrateSummary, error) {
	var sum migrateSummary
	tally := func(name string, file bool, size int64) {
		switch {
		case strings.HasPrefix(name, ".memtool"):
			sum.policy++
		case file:
			sum.files++
			sum.bytes += size
		default:
			sum.dirs++
		}
	}
	for _, d := range p.dirs {
		err := dst.Mkdir(ctx, d)
		if force && errors.Is(err, memtool.ErrExist) {
			if fi, serr := dst.Stat(ctx, d); serr == nil && fi.IsDir() {
				err = nil
			}
		}
		if err != nil {
			return sum, fmt.Errorf("directory %s: %w", shownName(d), err)
		}
		tally(d, false, 0)
	}
	mode := memtool.CreateOnly
	if force {
		mode = memtool.Replace
	}
	sums := make(map[string][sha256.Size]byte, len(p.files))
	for _, f := range p.files {
		data, err := src.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("reading %s: %w", shownName(f), err)
		}
		if err := dst.WriteFile(ctx, f, data, mode); err != nil {
			return sum, fmt.Errorf("writing %s: %w", shownName(f), err)
		}
		sums[f] = sha256.Sum256(data)
		tally(f, true, int64(len(data)))
		prog.add(int64(len(data)))
	}
	var bad []string
	for _, f := range p.files {
		got, err := dst.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("verifying %s: %w", shownName(f), err)
		}
		if sha256.Sum256(got) != sums[f] {
			bad = append(bad, shownName(f))
		}
	}
	for _, d := range p.dirs {
		if fi, err := dst.Stat(ctx, d); err != nil || !fi.IsDir() {
			bad = append(bad, shownName(d)+"/")
		}
	}
	if len(bad) > 0 {
		return sum, fmt.Errorf("verification failed: %d entries in the target differ from the source: %s", len(bad), strings.Join(bad, ", "))
	}
	changed, err := sourceChanged(ctx, src, p, sums)
	if err != nil {
		return sum, fmt.Errorf("reading the source again: %w", err)
	}
	if len(changed) > 0 {
		if len(changed) > 10 {
			changed = append(changed[:10], "...")
		}
		return sum, fmt.Errorf("the source changed during the migration (%s), so the copy is not the source's; run migrate again with --force while nothing writes to the source", strings.Join(changed, ", "))
	}
	return sum, nil
}

// sourceChanged returns the entries of src that differ from what the plan
// and the SHA-256 sums of the files copied say it held (a file added,
// edited, removed or renamed by another writer meanwhile), shown as
// messages show names: the target, verified against the bytes read, is
// then not a copy of the source as it is.
func sourceChanged(ctx context.Context, src memtool.Store, p *plan, sums map[string][sha256.Size]byte) ([]string, error) {
	now, err := planCopy(ctx, src)
	if err != nil {
		return nil, err
	}
	entries := func(q *plan) map[string]bool {
		m := make(map[string]bool, len(q.dirs)+len(q.files))
		for _, d := range q.dirs {
			m[shownName(d)+"/"] = true
		}
		for _, f := range q.files {
			m[shownName(f)] = true
		}
		return m
	}
	was, is := entries(p), entries(now)
	var out []string
	for n := range was {
		if !is[n] {
			out = append(out, n)
		}
	}
	for n := range is {
		if !was[n] {
			out = append(out, n)
		}
	}
	for _, f := range p.files {
		data, err := src.ReadFile(ctx, f, migrateLimit)
		if errors.Is(err, memtool.ErrNotExist) {
			continue // listed above
		}
		if err != nil {
			return nil, err
		}
		if sha256.Sum256(data) != sums[f] {
			out = append(out, shownName(f))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// unfitNames returns the entries of the plan, each quoted with why,
// that the kind of store at the URL to cannot hold under the same name,
// as far as migrate knows its kind: a directory (and file+blob) takes no
// name over 255 bytes, file+blob no file ending in ".attrs",
// PostgreSQL no name that is not UTF-8 or holds a NUL, and S3, Google
// Cloud Storage and Azure no name that is not UTF-8 nor a key over 1024
// bytes (the URL's prefix and the tenant's part included). Writing such a
// name fails midway, or (S3) stores it under another name.
func unfitNames(to, tenant string, p *plan) []string {
	scheme, _, _ := strings.Cut(to, ":")
	_, dirStore := localDir(to)
	dirStore = dirStore || scheme == "helper"
	var keyRoot string
	object := scheme == "s3" || scheme == "gs" || scheme == "azblob"
	if object {
		if u, err := url.Parse(to); err == nil {
			if prefix := strings.Trim(u.Query().Get("prefix"), "/"); prefix != "" {
				keyRoot = prefix + "/"
			}
		}
		keyRoot += "f/"
		if tenant != "" {
			keyRoot = strings.TrimSuffix(keyRoot, "f/") + "tenants/" + tenant + "/f/"
		}
	}
	var out []string
	check := func(name string, dir bool) {
		why := ""
		switch {
		case (object || scheme == "postgres" || scheme == "postgresql") && !utf8.ValidString(name):
			why = "not UTF-8"
		case (scheme == "postgres" || scheme == "postgresql") && strings.Contains(name, "\x00"):
			why = "it holds a NUL byte"
		case object && !dir && len(keyRoot+name) > 1024, object && dir && len(keyRoot+name+"/.memtool-dir") > 1024:
			why = "its object key would be over 1024 bytes"
		case scheme == "file+blob" && !dir && strings.HasSuffix(name, ".attrs"):
			why = "file+blob cannot store a name ending in .attrs"
		case dirStore || scheme == "file+blob":
			for _, c := range strings.Split(name, "/") {
				if len(c) > 255 {
					why = "a name in it is over 255 bytes"
				}
			}
		}
		if why != "" {
			out = append(out, fmt.Sprintf("%q (%s)", shownName(name), why))
		}
	}
	for _, d := range p.dirs {
		check(d, true)
	}
	for _, f := range p.files {
		check(f, false)
	}
	return out
}

// sharedKeys reports whether the object stores from and to are in the
// same bucket of the same service with keys that overlap: one's prefix is
// the other's, or lies in the other's memories (PREFIX/f/ or
// PREFIX/tenants/), which would then list the copy as entries of its own.
// Stores under sibling prefixes are independent.
func sharedKeys(from, to string) bool {
	a, errA := url.Parse(from)
	b, errB := url.Parse(to)
	if errA != nil || errB != nil || a.Scheme != b.Scheme || a.Host != b.Host {
		return false
	}
	if a.Scheme != "s3" && a.Scheme != "gs" && a.Scheme != "azblob" {
		return false
	}
	qa, qb := a.Query(), b.Query()
	endpoint := func(q url.Values) string { return strings.ToLower(strings.TrimSuffix(q.Get("endpoint"), "/")) }
	if endpoint(qa) != endpoint(qb) {
		return false
	}
	prefix := func(q url.Values) string {
		if p := strings.Trim(q.Get("prefix"), "/"); p != "" {
			return p + "/"
		}
		return ""
	}
	within := func(outer, inner string) bool {
		return inner == outer || strings.HasPrefix(inner, outer+"f/") || strings.HasPrefix(inner, outer+"tenants/")
	}
	pa, pb := prefix(qa), prefix(qb)
	return within(pa, pb) || within(pb, pa)
}
