package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
)

// WorkloadConfig says how large the generated workloads are.
type WorkloadConfig struct {
	Seed  uint64
	Ops   int // operations of the mixed workload
	Files int // files the mixed workload creates (among its Ops)
	Reads int // operations of the read-only workload
}

// Mix of the mixed workload, in parts of 100 of the operations that are not
// creates; the read-only workload views files and directories in the same
// proportion as the mixed one.
const (
	mixStrReplace = 27
	mixInsert     = 21
	mixViewFile   = 40
	mixViewDir    = 12
	viewRangeOdds = 4 // one file view in viewRangeOdds has a view_range
)

// dirs are where the files go: a few directories, one of them nested, and
// the root itself.
var dirs = []string{"", "user", "projects", "projects/memtool", "people", "journal"}

var words = strings.Fields(`the user prefers short answers uses go and typescript
lives in lisbon works on memtool likes tea dislikes meetings before noon deadline
friday review notes meeting design decision keep tests fast ask before deleting
files release plan customer feedback durable writes atomic rename fsync budget`)

// Workload is a sequence of memory tool inputs, one JSON object each.
type Workload struct {
	Name   string
	Inputs []json.RawMessage
	Kinds  []string // the command of each input; views are "view_file" or "view_dir"
}

// model is what the generator knows the store holds, so that every command
// it emits succeeds: files as their lines (strings.Split of the content, as
// the tool counts them) and the directories that exist.
type model struct {
	rng   *rand.Rand
	tag   int
	files []string // in creation order, so choices are deterministic
	lines map[string][]string
	dirs  []string
}

// Generate returns the mixed and the read-only workload for cfg, and the
// content of every file once the mixed one has run, by name under
// /memories. The read-only workload runs on that state. Equal configs give
// byte-identical workloads.
func Generate(cfg WorkloadConfig) (mixed, reads Workload, final map[string]string) {
	m := &model{rng: rand.New(rand.NewPCG(cfg.Seed, 0x6d656d746f6f6c)), lines: map[string][]string{}}

	// Exact counts, shuffled; the first command is a create so that every
	// edit and view has a file to work on.
	rest := cfg.Ops - cfg.Files
	kinds := slices.Repeat([]string{"create"}, cfg.Files)
	counts := []struct {
		kind string
		n    int
	}{
		{"str_replace", rest * mixStrReplace / 100},
		{"insert", rest * mixInsert / 100},
		{"view_dir", rest * mixViewDir / 100},
	}
	used := 0
	for _, c := range counts {
		kinds = append(kinds, slices.Repeat([]string{c.kind}, c.n)...)
		used += c.n
	}
	kinds = append(kinds, slices.Repeat([]string{"view_file"}, rest-used)...)
	m.rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	if first := slices.Index(kinds, "create"); first > 0 {
		kinds[0], kinds[first] = kinds[first], kinds[0]
	}

	mixed.Name = "mixed"
	for _, k := range kinds {
		mixed.add(k, m.next(k))
	}
	final = m.contents()
	reads.Name = "read-only"
	for range cfg.Reads {
		k := "view_file"
		if m.rng.IntN(mixViewFile+mixViewDir) < mixViewDir {
			k = "view_dir"
		}
		reads.add(k, m.next(k))
	}
	return mixed, reads, final
}

func (w *Workload) add(kind string, input map[string]any) {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err) // plain strings and numbers
	}
	w.Inputs = append(w.Inputs, b)
	w.Kinds = append(w.Kinds, kind)
}

// line returns a new line of notes with a tag no other line has, so that a
// str_replace of it matches exactly once.
func (m *model) line() string {
	m.tag++
	n := 5 + m.rng.IntN(8)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[m.rng.IntN(len(words))]
	}
	return fmt.Sprintf("- [t%06d] %s", m.tag, strings.Join(ws, " "))
}

func (m *model) pickFile() string { return m.files[m.rng.IntN(len(m.files))] }

// next returns the input of one command of kind and updates the model.
func (m *model) next(kind string) map[string]any {
	switch kind {
	case "create":
		dir := dirs[m.rng.IntN(len(dirs))]
		name := path.Join(dir, fmt.Sprintf("%s-%03d.md", words[m.rng.IntN(len(words))], len(m.files)))
		lines := make([]string, 0, 40)
		for range 8 + m.rng.IntN(32) {
			lines = append(lines, m.line())
		}
		lines = append(lines, "") // the text ends with a newline
		m.files = append(m.files, name)
		m.lines[name] = lines
		for d := dir; d != "." && d != "" && !slices.Contains(m.dirs, d); d = path.Dir(d) {
			m.dirs = append(m.dirs, d)
		}
		return map[string]any{"command": "create", "path": "/memories/" + name, "file_text": strings.Join(lines, "\n")}
	case "str_replace":
		name := m.pickFile()
		lines := m.lines[name]
		// Every line but the empty one after the final newline has a tag.
		var tagged []int
		for i, l := range lines {
			if l != "" {
				tagged = append(tagged, i)
			}
		}
		i := tagged[m.rng.IntN(len(tagged))]
		old, repl := lines[i], m.line()
		lines[i] = repl
		return map[string]any{"command": "str_replace", "path": "/memories/" + name, "old_str": old, "new_str": repl}
	case "insert":
		name := m.pickFile()
		lines := m.lines[name]
		at := m.rng.IntN(len(lines) + 1)
		text := m.line()
		m.lines[name] = slices.Insert(lines, at, text)
		return map[string]any{"command": "insert", "path": "/memories/" + name, "insert_line": at, "insert_text": text + "\n"}
	case "view_file":
		name := m.pickFile()
		in := map[string]any{"command": "view", "path": "/memories/" + name}
		if m.rng.IntN(viewRangeOdds) == 0 {
			n := len(m.lines[name])
			start := 1 + m.rng.IntN(n)
			end := -1
			if m.rng.IntN(2) == 0 {
				end = start + m.rng.IntN(n-start+1)
			}
			in["view_range"] = []int{start, end}
		}
		return in
	case "view_dir":
		i := m.rng.IntN(len(m.dirs) + 1)
		if i == len(m.dirs) {
			return map[string]any{"command": "view", "path": "/memories"}
		}
		return map[string]any{"command": "view", "path": "/memories/" + m.dirs[i]}
	}
	panic("unknown kind " + kind)
}

// contents returns the text of every file the model holds, by name.
func (m *model) contents() map[string]string {
	out := map[string]string{}
	for name, lines := range m.lines {
		out[name] = strings.Join(lines, "\n")
	}
	return out
}
