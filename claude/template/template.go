// Package template holds ready-made memory layouts: files to seed a store
// with, and the system-prompt guidance that tells the model how to use them.
//
// Dev is the multi-session development pattern from the memory tool docs: a
// progress log, a feature checklist and a decisions file, read first in
// every session and updated at its end, with a feature marked done only
// after end-to-end verification. `memtool init --template dev` seeds it;
// claude.WithGuidance(template.Dev().Guidance) gives the model its rules.
package template

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memtool/memtool"
)

// A File is one file a template seeds.
type File struct {
	Path string // a path under /memories
	Text string
}

// A Template is a memory layout and the guidance that goes with it.
type Template struct {
	Name    string
	Summary string
	Files   []File
	// Guidance is system-prompt text for the sessions that use the layout.
	Guidance string
}

// Dev returns the multi-session development template.
func Dev() Template {
	return Template{
		Name:    "dev",
		Summary: "multi-session development: progress log, feature checklist, decisions",
		Files: []File{
			{Path: "/memories/progress.md", Text: devProgress},
			{Path: "/memories/features.md", Text: devFeatures},
			{Path: "/memories/decisions.md", Text: devDecisions},
		},
		Guidance: devGuidance,
	}
}

// All returns every template, by name.
func All() []Template { return []Template{Dev()} }

// Names returns the names of the templates.
func Names() []string {
	var names []string
	for _, t := range All() {
		names = append(names, t.Name)
	}
	return names
}

// Lookup returns the template called name.
func Lookup(name string) (Template, bool) {
	i := slices.IndexFunc(All(), func(t Template) bool { return t.Name == name })
	if i < 0 {
		return Template{}, false
	}
	return All()[i], true
}

// A Seeded file is one the template wrote or found already there.
type Seeded struct {
	Path string
	// Created is false when something was already at Path; it was left as
	// it was.
	Created bool
}

// Seed writes the template's files into store, creating their parent
// directories. It never replaces anything: a file already there (from an
// earlier session, say) is kept and reported with Created false. It stops
// at the first failure.
func (t Template) Seed(ctx context.Context, store memtool.Store) ([]Seeded, error) {
	var out []Seeded
	for _, f := range t.Files {
		name, _, err := memtool.CleanPath(f.Path)
		if err != nil || name == "" {
			return out, fmt.Errorf("template %s: bad path %s: %v", t.Name, f.Path, err)
		}
		if err := mkdirAll(ctx, store, name); err != nil {
			return out, fmt.Errorf("template %s: %s: %w", t.Name, f.Path, err)
		}
		err = store.WriteFile(ctx, name, []byte(f.Text), memtool.CreateOnly)
		switch {
		case errors.Is(err, memtool.ErrExist):
			out = append(out, Seeded{Path: f.Path})
		case err != nil:
			return out, fmt.Errorf("template %s: %s: %w", t.Name, f.Path, err)
		default:
			out = append(out, Seeded{Path: f.Path, Created: true})
		}
	}
	return out, nil
}

// mkdirAll creates the parent directories of name.
func mkdirAll(ctx context.Context, store memtool.Store, name string) error {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		if err := store.Mkdir(ctx, dir); err != nil && !errors.Is(err, memtool.ErrExist) {
			return err
		}
	}
	return nil
}

const devProgress = `# Progress log

One entry per session, newest first, added at the end of the session: a
"## Session <n>: <date>" heading, then three lines:
"- Done:" what was finished, and how it was verified;
"- State:" what is half-done or broken;
"- Next:" the first thing the next session should do.

## Session 0
- Done: memory set up from the dev template.
- State: nothing built yet; features.md lists no features.
- Next: list the features to build in features.md, then start on the first.
`

const devFeatures = `# Feature checklist

The features to build, in order, one per line under "Features":
"- [ ] <feature>" while it is not done, "- [x] <feature>: <how it was verified>" once it is.

Mark a feature done only after it was verified end to end, as a user would use it.
Never remove or reword a feature to make it pass; if one must change, record why
in decisions.md.

## Features
`

const devDecisions = `# Decisions

Decisions later sessions must respect, newest last, each under a
"## <date>: <decision>" heading with why it was taken and what was rejected.
`

const devGuidance = `You work on this project across many sessions. Your context does not carry over from one session to the next: your memory directory does. It holds:
- /memories/progress.md: the progress log, one entry per session, newest first
- /memories/features.md: the feature checklist
- /memories/decisions.md: decisions later sessions must respect

At the start of every session, before anything else, read these three files, and work from them.
Work on one feature at a time: the first unfinished one in features.md, unless the user asks for another.
Mark a feature done ([x]) only after you have verified it end to end, as a user would, and write how on the same line. Never remove or reword a feature to make it pass.
When you make a decision that later sessions must respect, add it to decisions.md with the reason and what you rejected.
At the end of the session, update progress.md: what you finished and how you verified it, what is half-done or broken, and what the next session should do first.`
