//go:build linux

package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/hostfault"
)

// dfStack is a directory store on a small ext4 under the whole policy
// stack of a policy file, with a model of what its memory holds.
type dfStack struct {
	t      *testing.T
	mnt    string
	dir    string
	env    []string
	key    encrypt.Key
	policy string
	model  map[string]string // name (no /memories/) -> content
	kept   map[string][]string
}

func newDFStack(t *testing.T, size int64, policy string) *dfStack {
	mnt := hostfault.Ext4(t, size, "-b", "1024", "-m", "0")
	key, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	return &dfStack{t: t, mnt: mnt, dir: filepath.Join(mnt, "store"), key: key,
		env:    []string{"MEMTOOL_KEY=" + key.Text()},
		policy: writePolicy(t, policy), model: map[string]string{}, kept: map[string][]string{}}
}

func (d *dfStack) run(args ...string) (string, string, int) {
	d.t.Helper()
	return runMemtoolEnv(d.t, d.env, append(args, "--store", d.dir, "--policy", d.policy)...)
}

// exec runs the calls, one a line, and returns their answers.
func (d *dfStack) exec(calls []map[string]any) []answer {
	d.t.Helper()
	var in strings.Builder
	for _, c := range calls {
		in.WriteString(jsonLine(c))
	}
	env := append(childEnv(), d.env...)
	out, stderr, code := runMemtool(d.t, env, in.String(), "exec", "--overwrite", "--store", d.dir, "--policy", d.policy)
	if code != 0 {
		d.t.Fatalf("exec: exit %d: %s", code, stderr)
	}
	var as []answer
	for _, l := range decodeLines(d.t, out) {
		as = append(as, l...)
	}
	if len(as) != len(calls) {
		d.t.Fatalf("%d answers to %d calls: %s", len(as), len(calls), out)
	}
	return as
}

// sealed opens the store below the policies, through the encryption.
func (d *dfStack) sealed() (memtool.Store, func()) {
	return openSealed(d.t, d.dir, d.key)
}

// check compares the memory with the model: the same files, each with
// its content, and no debris of the store's.
func (d *dfStack) check(when string, settled bool) {
	t := d.t
	t.Helper()
	s, done := d.sealed()
	defer done()
	var got []string
	filepath.WalkDir(d.dir, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(d.dir, p)
		switch {
		case err != nil:
			t.Errorf("%s: walking %s: %v", when, p, err)
		case strings.HasPrefix(e.Name(), ".memtool-tmp") || strings.HasPrefix(e.Name(), ".memtool-trash-"):
			t.Errorf("%s: debris %s", when, rel)
		case rel != "." && strings.HasPrefix(rel, ".memtool"):
			if e.IsDir() {
				return fs.SkipDir
			}
		case e.Type().IsRegular():
			got = append(got, rel)
		}
		return nil
	})
	want := slices.Sorted(func(yield func(string) bool) {
		for k := range d.model {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(got, want) {
		t.Errorf("%s: files %q, want %q", when, got, want)
	}
	for name, content := range d.model {
		data, err := s.ReadFile(t.Context(), name, 1<<20)
		if err != nil || string(data) != content {
			t.Errorf("%s: %s reads %.40q… (%d bytes), %v; want %.40q… (%d bytes)", when, name, data, len(data), err, content, len(content))
		}
	}
	// Every content a change answered as done replaced is a version, once
	// a change with space has finished the deletes in history's trash.
	for name, olds := range d.kept {
		if !settled {
			break
		}
		vs, err := versions.Versions(t.Context(), s, "/memories/"+name)
		if err != nil {
			t.Errorf("%s: versions of %s: %v", when, name, err)
			continue
		}
		var have []string
		for _, v := range vs {
			data, err := versions.Read(t.Context(), s, "/memories/"+name, v.N)
			if err != nil {
				t.Errorf("%s: version %d of %s: %v", when, v.N, name, err)
			}
			have = append(have, string(data))
		}
		for _, o := range olds {
			if !slices.Contains(have, o) {
				t.Errorf("%s: %s lost the version %.40q…", when, name, o)
			}
		}
	}
}

func pad(tag string, n int) string {
	return tag + "\n" + strings.Repeat(tag+" line of text\n", n/(len(tag)+14))
}

// TestDiskFullStack runs each kind of change through memtool exec under
// encryption, history, expiry and limits, on a directory store whose
// ext4 has 0 to 40 KiB left: every change answered as done is there with
// its content (and the content it replaced is a version), every one
// answered with an error changed nothing, and once the space is back the
// same changes work, and history, diff, revert and gc too, with no repair.
func TestDiskFullStack(t *testing.T) {
	for _, free := range []int64{0, 2, 4, 8, 12, 16, 24, 32, 40} {
		t.Run(fmt.Sprint(free), func(t *testing.T) {
			d := newDFStack(t, 4<<20, `{"limits":{"max_files":50,"max_bytes":1000000},"encrypt":true,"expiry":true,"history":{}}`)
			seed := map[string]string{"a.md": pad("AAA", 3000), "b.md": pad("BBB", 3000), "c.md": pad("CCC", 3000),
				"d.md": pad("DDD", 3000), "e.md": pad("EEE", 3000), "dir/f.md": pad("FFF", 3000)}
			var calls []map[string]any
			for _, name := range slices.Sorted(func(y func(string) bool) {
				for k := range seed {
					if !y(k) {
						return
					}
				}
			}) {
				calls = append(calls, map[string]any{"command": "create", "path": "/memories/" + name, "file_text": seed[name]})
				d.model[name] = seed[name]
			}
			for i, a := range d.exec(calls) {
				if a.IsError {
					t.Fatalf("seed %d: %s", i, a.Text())
				}
			}
			if free == 0 { // and on the file system remounted read-only
				hostfault.Remount(t, d.mnt, true)
				d.round("readonly")
				d.check("readonly", false)
				hostfault.Remount(t, d.mnt, false)
			}
			freeAll := hostfault.Fill(t, d.mnt, free<<10)
			d.round("full")
			d.check("full", false)
			freeAll()
			d.check("freed", false)
			d.round("freed")
			d.check("after", true)
			d.afterwards()
		})
	}
}

// round runs one of each change and applies to the model those answered
// as done.
func (d *dfStack) round(when string) {
	t := d.t
	m := d.model
	type change struct {
		call  map[string]any
		apply func()
	}
	var cs []change
	add := func(call map[string]any, apply func()) { cs = append(cs, change{call, apply}) }
	keep := func(name string) { d.kept[name] = append(d.kept[name], m[name]) }
	if old, ok := m["a.md"]; ok && strings.Contains(old, "AAA\n") {
		add(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "AAA\n", "new_str": "aaa\n"}, func() {
			keep("a.md")
			m["a.md"] = strings.Replace(old, "AAA\n", "aaa\n", 1)
		})
	}
	if _, ok := m["b.md"]; ok {
		nb := pad("bb-"+when, 3500)
		add(map[string]any{"command": "create", "path": "/memories/b.md", "file_text": nb}, func() { keep("b.md"); m["b.md"] = nb })
	}
	if _, ok := m["c.md"]; ok {
		add(map[string]any{"command": "delete", "path": "/memories/c.md"}, func() { keep("c.md"); delete(m, "c.md") })
	}
	if _, ok := m["d.md"]; ok {
		add(map[string]any{"command": "rename", "old_path": "/memories/d.md", "new_path": "/memories/d2.md"}, func() { m["d2.md"] = m["d.md"]; delete(m, "d.md") })
	}
	if old, ok := m["e.md"]; ok {
		add(map[string]any{"command": "insert", "path": "/memories/e.md", "insert_line": 0, "insert_text": "inserted " + when}, func() {
			keep("e.md")
			m["e.md"] = "inserted " + when + "\n" + old
		})
	}
	if _, ok := m["dir/f.md"]; ok {
		add(map[string]any{"command": "delete", "path": "/memories/dir"}, func() { keep("dir/f.md"); delete(m, "dir/f.md") })
	}
	nn := "new-" + when + ".md"
	nc := pad("NEW"+when, 2000)
	add(map[string]any{"command": "create", "path": "/memories/" + nn, "file_text": nc}, func() { m[nn] = nc })
	var calls []map[string]any
	for _, c := range cs {
		calls = append(calls, c.call)
	}
	for i, a := range d.exec(calls) {
		t.Logf("%s: %v: error %v: %.200s", when, calls[i]["command"], a.IsError, a.Text())
		if !a.IsError {
			cs[i].apply()
		}
	}
}

// afterwards runs the administrative commands on the store, now with
// space: history lists a.md's versions, diff and revert work, and gc.
func (d *dfStack) afterwards() {
	t := d.t
	s, done := d.sealed()
	vs, err := versions.Versions(t.Context(), s, "/memories/b.md")
	if err != nil || len(vs) == 0 {
		done()
		t.Fatalf("versions of b.md: %v, %v", vs, err)
	}
	n := fmt.Sprint(vs[0].N) // a change that failed left a gap
	old, err := versions.Read(t.Context(), s, "/memories/b.md", vs[0].N)
	done()
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := d.run("history", "/memories/b.md")
	if code != 0 || !strings.HasPrefix(out, n+"\t") {
		t.Errorf("history: exit %d, %q, %q; want version %s first", code, out, stderr, n)
	}
	if _, stderr, code := d.run("diff", "/memories/b.md", "--from", n); code > 1 {
		t.Errorf("diff: exit %d, %q", code, stderr)
	}
	if _, stderr, code := d.run("revert", "/memories/b.md", "--to", n); code != 0 {
		t.Errorf("revert: exit %d, %q", code, stderr)
	} else {
		d.kept["b.md"] = append(d.kept["b.md"], d.model["b.md"])
		d.model["b.md"] = string(old)
	}
	if _, stderr, code := d.run("gc", "--unused-for", "30d"); code != 0 {
		t.Errorf("gc: exit %d, %q", code, stderr)
	}
	d.check("reverted", true)
}
