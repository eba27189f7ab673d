package workdir_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/workdir"
)

// The file tools, driven as a prompt-injected model would drive them,
// neither read nor change anything outside the work directory, whatever the
// spelling of the path (.., absolute, symbolic links to a file or a
// directory, chains, dangling links, links that climb out), and glob and
// grep do not follow a linked directory out. Write and edit change nothing
// in a read-only directory (the memory store), however the path reaches it:
// through .., an absolute path, or a link to the store or to a file in it.
// Over a hard link, write and edit replace the link, not the file it shares.
func TestConfinement(t *testing.T) {
	root := t.TempDir()
	outside, work := filepath.Join(root, "outside"), filepath.Join(root, "work")
	store := filepath.Join(work, "memories")
	for _, d := range []string{filepath.Join(outside, "dir"), store, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(outside, "secret.txt"):      "SECRET outside\n",
		filepath.Join(outside, "dir", "f.txt"):    "SECRET linked dir\n",
		filepath.Join(store, "notes.md"):          "SECRET memory\n",
		filepath.Join(store, ".memtool.lock"):     "",
		filepath.Join(work, "sub", "ordinary.go"): "package sub\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"lf":          filepath.Join(outside, "secret.txt"),
		"ld":          filepath.Join(outside, "dir"),
		"chain1":      "chain2",
		"chain2":      "../outside",
		"dangling":    filepath.Join(outside, "new.txt"),
		"danglingdir": filepath.Join(outside, "newdir"),
		"sub/up":      "../..",
		"loop":        "loop",
		"memalias":    "memories",
		"notealias":   "memories/notes.md",
	} {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"hardnote":   filepath.Join(store, "notes.md"),
		"hardsecret": filepath.Join(outside, "secret.txt"),
	} {
		if err := os.Link(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	hands, err := workdir.Open(work, &workdir.Options{ReadOnlyDirs: []string{store}})
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	tools := map[string]func(input string) (string, bool){}
	for _, tool := range hands.Tools() {
		tools[tool.Name()] = func(input string) (string, bool) {
			content, err := tool.Execute(context.Background(), json.RawMessage(input))
			if err != nil {
				return err.Error(), false
			}
			return content[0].OfText.Text, true
		}
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	before := tree(t, root)

	// Paths that lead outside: every tool refuses them.
	for _, p := range []string{
		"..", "../outside/secret.txt", "sub/../../outside/secret.txt", "/", "/etc/passwd",
		filepath.Join(outside, "secret.txt"), "//" + outside + "/secret.txt", work + "/../outside/secret.txt",
		"lf", "lf/", "lf/.", "ld", "ld/f.txt", "ld/new.txt", "chain1/secret.txt", "chain1/new.txt",
		"dangling", "danglingdir", "danglingdir/x", "sub/up/outside/secret.txt", "memories/../lf",
		"memalias/../ld/f.txt", "loop", "loop/x", "a\x00b", strings.Repeat("a", 300), strings.Repeat("a/", 3000) + "x",
	} {
		for tool, input := range map[string]string{
			"read":  `{"file_path":` + quote(p) + `}`,
			"write": `{"file_path":` + quote(p) + `,"content":"PWNED"}`,
			"edit":  `{"file_path":` + quote(p) + `,"old_string":"SECRET","new_string":"PWNED"}`,
			"glob":  `{"pattern":"**","path":` + quote(p) + `}`,
			"grep":  `{"pattern":"SECRET","path":` + quote(p) + `}`,
		} {
			if out, ok := tools[tool](input); ok {
				t.Errorf("%s %.60q: %.200q, want a refusal", tool, p, out)
			}
		}
	}
	// Paths into the memory store: write and edit refuse them.
	for _, p := range []string{
		"memories", "memories/notes.md", "memories/new.md", "memories/sub/new.md", "memories/.memtool.lock",
		"memories/.memtool-tenants/t/notes.md", "./memories/../memories/notes.md", "sub/../memories/notes.md",
		"memories//notes.md", filepath.Join(store, "notes.md"), "sub/up/work/memories/notes.md",
		"memalias", "memalias/notes.md", "memalias/new.md", "notealias",
	} {
		for tool, input := range map[string]string{
			"write": `{"file_path":` + quote(p) + `,"content":"PWNED"}`,
			"edit":  `{"file_path":` + quote(p) + `,"old_string":"SECRET","new_string":"PWNED"}`,
		} {
			if out, ok := tools[tool](input); ok {
				t.Errorf("%s %q: %q, want a refusal", tool, p, out)
			}
		}
	}
	// Hard links: what is written replaces the link, not the shared file.
	tools["write"](`{"file_path":"hardnote","content":"PWNED"}`)
	tools["edit"](`{"file_path":"hardsecret","old_string":"SECRET","new_string":"PWNED"}`)
	// Patterns that climb out are refused.
	for _, pattern := range []string{"../**", "/etc/*", "**/../../*", "./../*", filepath.Join(outside, "*")} {
		if out, ok := tools["glob"](`{"pattern":` + quote(pattern) + `}`); ok {
			t.Errorf("glob %q: %q, want a refusal", pattern, out)
		}
	}
	// Over the whole work directory, glob and grep list and search what is
	// in it, not what its links lead to; grep both through rg (if on PATH)
	// and through its own walk.
	if out, _ := tools["glob"](`{"pattern":"**"}`); strings.Contains(out, "f.txt") || strings.Contains(out, "secret.txt") ||
		!strings.Contains(out, "ordinary.go") {
		t.Errorf("glob ** lists %q", out)
	}
	for _, path := range []string{os.Getenv("PATH"), ""} {
		t.Setenv("PATH", path)
		if out, _ := tools["grep"](`{"pattern":"SECRET"}`); strings.Contains(out, "linked dir") || strings.Contains(out, outside) ||
			!strings.Contains(out, "SECRET memory") {
			t.Errorf("grep with PATH %q finds %q", path, out)
		}
	}

	after := tree(t, root)
	for name, was := range before {
		if !strings.HasPrefix(name, work+string(filepath.Separator)) || strings.HasPrefix(name, store) {
			if now, ok := after[name]; !ok || now != was {
				t.Errorf("%s changed: %q, now %q (there: %v)", name, was, now, ok)
			}
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok && (!strings.HasPrefix(name, work+string(filepath.Separator)) || strings.HasPrefix(name, store)) {
			t.Errorf("%s was created", name)
		}
	}
}

// tree maps each entry under root to its mode and, for a file, content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(data)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
