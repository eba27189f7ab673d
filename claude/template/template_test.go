package template_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude/template"
	"github.com/memtool/memtool/filestore"
)

func TestDevSeed(t *testing.T) {
	ctx := context.Background()
	store, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dev, ok := template.Lookup("dev")
	if !ok {
		t.Fatal("no dev template")
	}

	seeded, err := dev.Seed(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/memories/progress.md", "/memories/features.md", "/memories/decisions.md"}
	if len(seeded) != len(want) {
		t.Fatalf("seeded %v", seeded)
	}
	for i, s := range seeded {
		if s.Path != want[i] || !s.Created {
			t.Errorf("seeded[%d] = %+v, want %s created", i, s, want[i])
		}
	}

	// The model sees the layout through the memory tool.
	mem := memtool.New(store, nil)
	res := mem.Execute(ctx, &memtool.View{Path: "/memories/features.md"})
	if res.IsError || !strings.Contains(res.Text, "verified end to end") {
		t.Errorf("view features.md: %q", res.Text)
	}

	// A second seed keeps what a session wrote.
	edited := "# Progress log\n## Session 1\n- Done: login\n"
	if err := store.WriteFile(ctx, "progress.md", []byte(edited), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	seeded, err = dev.Seed(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeded {
		if s.Created {
			t.Errorf("second seed created %s", s.Path)
		}
	}
	data, err := store.ReadFile(ctx, "progress.md", 1<<20)
	if err != nil || string(data) != edited {
		t.Errorf("progress.md = %q, %v; want it kept", data, err)
	}
}

func TestDevGuidance(t *testing.T) {
	g := template.Dev().Guidance
	for _, must := range []string{
		"before anything else", // read these first
		"/memories/progress.md", "/memories/features.md", "/memories/decisions.md",
		"only after you have verified it end to end", // done means verified
		"At the end of the session, update progress.md",
	} {
		if !strings.Contains(g, must) {
			t.Errorf("guidance lacks %q", must)
		}
	}
	for _, f := range template.Dev().Files {
		if !strings.Contains(g, f.Path) {
			t.Errorf("guidance does not name %s", f.Path)
		}
	}
	if _, ok := template.Lookup("nope"); ok {
		t.Error("Lookup(nope) found a template")
	}
	if names := template.Names(); len(names) != 1 || names[0] != "dev" {
		t.Errorf("Names() = %v", names)
	}
}
