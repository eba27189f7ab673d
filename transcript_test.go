package memtool_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
	"github.com/rogpeppe/go-internal/txtar"
)

// Golden transcripts: every byte the model sees, for every command, on
// every backend.
//
// A transcript (testdata/transcripts/*.txtar) is a txtar archive, read and
// written with go-internal's txtar package: each line "-- NAME --" starts
// a section, so no text may hold such a line. Its comment says what it
// covers; a line "option overwrite" in the comment
// runs it with Options.Overwrite. Then come sections, in order:
//
//	-- in --                     one tool input, as the model sends it (JSON)
//	-- ok --                     the exact text of a successful result
//	-- error --                  the exact text of a failed result (is_error)
//	-- ok json --, -- error json --  the same, as one JSON string: used for a
//	                             text with control characters (other than tab
//	                             and newline) such as "\r" or NUL, which would
//	                             be invisible, or make git call the file binary
//	-- image --                  the content of an image result, as JSON
//	-- seed NAME --              bytes put straight into the store
//	-- seed-base64 NAME --       the same, base64-encoded
//	-- seed-repeat NAME N UNIT --  UNIT (a JSON string) repeated N times
//
// Each in is followed by its result. A section's text ends with one newline
// that is not part of it, so a result ending in "\n" shows a blank line.
// Seeds write raw bytes (images, invalid UTF-8, huge files) that no command
// can; NAME is a store name ("dir/file.png"), parents are created.
//
// go test -run TestTranscripts -update rewrites the results from the
// memstore run, and still fails if another backend answers differently.

var update = flag.Bool("update", false, "rewrite the results in testdata/transcripts from the memstore run")

// backends are the stores every transcript runs on: every backend here
// (package backendtest), and one without Renamer and RemoveAller, so that
// Memory's fallbacks run.
var backends = append(namedBackends(backendtest.All()),
	namedBackend{"basic", func(*testing.T) memtool.Store { return storetest.Bare(memstore.New()) }})

type namedBackend struct {
	name string
	open func(t *testing.T) memtool.Store
}

func namedBackends(all []backendtest.Backend) []namedBackend {
	var out []namedBackend
	for _, b := range all {
		out = append(out, namedBackend{b.Name, func(t *testing.T) memtool.Store { return b.Open(t) }})
	}
	return out
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := parseTranscript(data)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if !*update {
				if err := tr.complete(); err != nil {
					t.Fatalf("%s: %v (run with -update to fill in results)", file, err)
				}
			}
			var first []section // memstore's results
			for _, b := range backends {
				t.Run(b.name, func(t *testing.T) {
					got := replay(t, tr, b.open(t))
					if *update && first == nil {
						first = got
						return
					}
					want := first
					if !*update {
						want = tr.results()
					}
					compare(t, want, got, tr.inputs())
				})
			}
			if *update && first != nil {
				out, err := tr.format(first)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				if !bytes.Equal(out, data) {
					if err := os.WriteFile(file, out, 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("updated %s", file)
				}
			}
		})
	}
}

// ---- running ----

// replay runs the transcript on store and returns one result section per input.
func replay(t *testing.T, tr *transcript, store memtool.Store) []section {
	var logged syncbuf.Buffer
	mem := memtool.New(store, &memtool.Options{
		Overwrite: tr.overwrite,
		Logger:    slog.New(slog.NewTextHandler(&logged, nil)),
	})
	ctx := t.Context()
	var out []section
	for _, s := range tr.sections {
		switch s.kind {
		case "seed", "seed-base64", "seed-repeat":
			if err := seed(ctx, store, s); err != nil {
				t.Fatalf("%s %s: %v", s.kind, s.arg, err)
			}
		case "in":
			out = append(out, resultSection(mem.Run(ctx, bytes.TrimSpace(s.data))))
		}
	}
	if logged.Len() > 0 {
		t.Errorf("Memory logged store failures:\n%s", logged.String())
	}
	return out
}

func resultSection(r memtool.Result) section {
	switch {
	case r.Image != nil:
		data, err := json.Marshal(r.Content())
		if err != nil {
			panic(err)
		}
		return section{kind: "image", data: data}
	case r.IsError:
		return section{kind: "error", data: []byte(r.Text)}
	}
	return section{kind: "ok", data: []byte(r.Text)}
}

// seed writes a seed section's bytes into the store, creating parents.
func seed(ctx context.Context, store memtool.Store, s section) error {
	name, data := s.arg, s.data
	switch s.kind {
	case "seed-base64":
		var err error
		data, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(s.data)), ""))
		if err != nil {
			return err
		}
	case "seed-repeat":
		// NAME N UNIT
		fields := strings.SplitN(s.arg, " ", 3)
		if len(fields) != 3 {
			return fmt.Errorf("want NAME COUNT UNIT")
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil {
			return err
		}
		var unit string
		if err := json.Unmarshal([]byte(fields[2]), &unit); err != nil {
			return fmt.Errorf("UNIT must be a JSON string: %v", err)
		}
		name, data = fields[0], []byte(strings.Repeat(unit, n))
	}
	return writeFile(ctx, store, name, data)
}

// writeFile puts data into the file name of s, replacing it, and creates
// its parents.
func writeFile(ctx context.Context, s memtool.Store, name string, data []byte) error {
	if _, err := memtool.MkdirAll(ctx, s, path.Dir(name)); err != nil {
		return err
	}
	return s.WriteFile(ctx, name, data, memtool.Replace)
}

// compare reports every result that differs from want.
func compare(t *testing.T, want, got []section, inputs []string) {
	t.Helper()
	for i := range got {
		if i >= len(want) {
			break
		}
		w, g := want[i], got[i]
		if w.kind == g.kind && bytes.Equal(w.data, g.data) {
			continue
		}
		t.Errorf("command %d: %s\n%s", i+1, inputs[i], diffText(w, g))
	}
	if len(want) != len(got) {
		t.Errorf("%d results, want %d", len(got), len(want))
	}
}

// diffText shows where two results part, line by line, quoted so that tabs,
// carriage returns and trailing spaces are visible.
func diffText(want, got section) string {
	var sb strings.Builder
	if want.kind != got.kind {
		fmt.Fprintf(&sb, "  result kind: got %s, want %s\n", got.kind, want.kind)
	}
	wl := strings.Split(string(want.data), "\n")
	gl := strings.Split(string(got.data), "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	from := max(0, i-2)
	for j := from; j < i; j++ {
		fmt.Fprintf(&sb, "    line %d: %q\n", j+1, wl[j])
	}
	for j := i; j < i+3; j++ {
		switch {
		case j < len(wl) && j < len(gl) && wl[j] == gl[j]:
			fmt.Fprintf(&sb, "    line %d: %q\n", j+1, wl[j])
			continue
		case j < len(wl):
			fmt.Fprintf(&sb, "  - line %d: %q\n", j+1, wl[j])
		}
		if j < len(gl) {
			fmt.Fprintf(&sb, "  + line %d: %q\n", j+1, gl[j])
		}
	}
	fmt.Fprintf(&sb, "  (want %d lines, %d bytes; got %d lines, %d bytes)", len(wl), len(want.data), len(gl), len(got.data))
	return sb.String()
}

// ---- the txtar format ----

type section struct {
	kind string // in, ok, error, image, seed, seed-base64, seed-repeat
	arg  string // the rest of the marker line, for seeds
	data []byte // the text, without the newline that ends the section
	raw  string // the text as it stands in the file, kept for inputs and seeds
}

type transcript struct {
	comment   []byte
	sections  []section
	overwrite bool
}

var sectionKinds = map[string]bool{
	"in": true, "ok": true, "error": true, "image": true,
	"seed": true, "seed-base64": true, "seed-repeat": true,
}

func isResult(kind string) bool { return kind == "ok" || kind == "error" || kind == "image" }

func parseTranscript(data []byte) (*transcript, error) {
	ar := txtar.Parse(data)
	tr := &transcript{comment: ar.Comment}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if strings.TrimSpace(line) == "option overwrite" {
			tr.overwrite = true
		}
	}
	prev := ""
	for i, f := range ar.Files {
		kind, arg, _ := strings.Cut(f.Name, " ")
		s := section{kind: kind, arg: arg, data: bytes.TrimSuffix(f.Data, []byte("\n")), raw: string(f.Data)}
		switch {
		case !sectionKinds[kind]:
			return nil, fmt.Errorf("section %d: unknown kind %q", i+1, f.Name)
		case strings.HasPrefix(kind, "seed") && arg == "":
			return nil, fmt.Errorf("section %d: %s needs a name", i+1, kind)
		case isResult(kind) && prev != "in":
			return nil, fmt.Errorf("section %d: a %s result without an input before it", i+1, kind)
		case isResult(kind) && arg == "json":
			var text string
			if err := json.Unmarshal(s.data, &text); err != nil {
				return nil, fmt.Errorf("section %d (%s json): %v", i+1, kind, err)
			}
			s.data, s.arg = []byte(text), ""
		case isResult(kind) && arg != "":
			return nil, fmt.Errorf("section %d: unknown %s encoding %q", i+1, kind, arg)
		}
		prev = kind
		tr.sections = append(tr.sections, s)
	}
	return tr, nil
}

// complete reports an input without a result.
func (tr *transcript) complete() error {
	for i, s := range tr.sections {
		if s.kind == "in" && (i+1 == len(tr.sections) || !isResult(tr.sections[i+1].kind)) {
			return fmt.Errorf("input %q has no result", s.data)
		}
	}
	return nil
}

func (tr *transcript) results() []section {
	var out []section
	for _, s := range tr.sections {
		if isResult(s.kind) {
			out = append(out, s)
		}
	}
	return out
}

func (tr *transcript) inputs() []string {
	var out []string
	for _, s := range tr.sections {
		if s.kind == "in" {
			out = append(out, string(bytes.TrimSpace(s.data)))
		}
	}
	return out
}

// format writes the transcript back with the given results after its inputs.
func (tr *transcript) format(results []section) ([]byte, error) {
	ar := &txtar.Archive{Comment: tr.comment}
	add := func(s section) error {
		name, data := s.kind, []byte(s.raw)
		if s.arg != "" {
			name += " " + s.arg
		}
		if isResult(s.kind) {
			data = append(bytes.Clone(s.data), '\n')
			if needsJSON(s.data) {
				var enc bytes.Buffer
				e := json.NewEncoder(&enc)
				e.SetEscapeHTML(false)
				if err := e.Encode(string(s.data)); err != nil {
					return err
				}
				name, data = name+" json", enc.Bytes()
			}
		}
		if len(txtar.Parse(data).Files) > 0 {
			return fmt.Errorf("a %s section holds a line that reads as a section marker: %q", s.kind, data)
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
		return nil
	}
	next := 0
	for _, s := range tr.sections {
		if isResult(s.kind) {
			continue
		}
		if err := add(s); err != nil {
			return nil, err
		}
		if s.kind == "in" {
			if err := add(results[next]); err != nil {
				return nil, err
			}
			next++
		}
	}
	return txtar.Format(ar), nil
}

// needsJSON reports text that would not read as what it is: control
// characters other than tab and newline, or invalid UTF-8.
func needsJSON(text []byte) bool {
	if !utf8.Valid(text) {
		return true
	}
	for _, r := range string(text) {
		if r != '\t' && r != '\n' && unicode.IsControl(r) {
			return true
		}
	}
	return false
}
