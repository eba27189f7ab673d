package workdir_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/workdir"
	"github.com/memtool/memtool/memstore"
)

// With your own loop: DeclareTools declares the tools, Tool.BetaToolResults
// answers memory's calls and RunTools the others, in the order written:
// the write, then the edit of the same file, then the read.
func TestOwnLoop(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	hands, err := workdir.Open(work, &workdir.Options{ReadOnlyDirs: []string{"vendor"}})
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{
			call("memory", `{"command":"create","path":"/memories/progress.md","file_text":"started\n"}`),
			call("write", `{"file_path":"notes/a.txt","content":"one\n"}`),
			call("edit", `{"file_path":"notes/a.txt","old_string":"one","new_string":"two"}`),
			call("read", `{"file_path":"notes/a.txt"}`),
			call("write", `{"file_path":"vendor/x.txt","content":"x"}`),
			call("other", `{}`),
		}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	client := srv.Client()
	mem := memtool.New(memstore.New(), nil)
	tool := claude.NewTool(mem, nil)

	params := claude.DeclareTools(claude.PrepareParams(userParams("Work.").BetaMessageNewParams), hands.Tools()...)
	params.Tools = append(params.Tools, anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{
		Name: "other", InputSchema: anthropic.BetaToolInputSchemaParam{Properties: map[string]any{}},
	}})
	if again := claude.DeclareTools(params, hands.Tools()...); len(again.Tools) != len(params.Tools) {
		t.Errorf("declaring twice: %d tools, then %d", len(params.Tools), len(again.Tools))
	}
	for range 5 {
		msg, err := client.Beta.Messages.New(ctx, params)
		if err != nil {
			t.Fatalf("%v (refusals: %v)", err, srv.Refusals())
		}
		if msg.StopReason != anthropic.BetaStopReasonToolUse {
			break
		}
		results := append(tool.BetaToolResults(ctx, msg), claude.RunTools(ctx, msg, hands.Tools()...)...)
		results = append(results, anthropic.NewBetaToolResultBlock("toolu_01_6", "other ran", false))
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewBetaUserMessage(results...))
	}
	if err := srv.Refusals(); err != nil {
		t.Fatal(err)
	}
	got := resultTexts(srv.Requests()[1])
	for id, want := range map[string]string{
		"toolu_01_1": "File created successfully at: /memories/progress.md",
		"toolu_01_2": "wrote 4 bytes to notes/a.txt",
		"toolu_01_4": "two\n",
		"toolu_01_6": "other ran",
	} {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
	if !strings.HasPrefix(got["toolu_01_5"], "!Error: write: ") || !strings.Contains(got["toolu_01_5"], "read-only") {
		t.Errorf("write into a read-only directory: %q", got["toolu_01_5"])
	}
	if _, err := os.Stat(filepath.Join(work, "vendor", "x.txt")); err == nil {
		t.Error("the read-only directory was written")
	}
}

func TestOpenRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		dir  string
		opts *workdir.Options
	}{
		"missing":      {filepath.Join(t.TempDir(), "nope"), nil},
		"file":         {file, nil},
		"negative cap": {t.TempDir(), &workdir.Options{MaxFileBytes: -1}},
	} {
		if tools, err := workdir.Open(tc.dir, tc.opts); err == nil {
			tools.Close()
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

// bash is there only when asked for, and starts in the work directory.
func TestBashOnlyWhenAllowed(t *testing.T) {
	work := t.TempDir()
	for _, allow := range []bool{false, true} {
		hands, err := workdir.Open(work, &workdir.Options{AllowBash: allow})
		if err != nil {
			t.Fatal(err)
		}
		defer hands.Close()
		var bash anthropic.BetaTool
		for _, tool := range hands.Tools() {
			if tool.Name() == "bash" {
				bash = tool
			}
		}
		if (bash != nil) != allow || strings.Contains(hands.Guidance(), "bash") != allow {
			t.Fatalf("AllowBash %v: bash tool %v, guidance %q", allow, bash != nil, hands.Guidance())
		}
		if bash == nil {
			continue
		}
		if _, err := os.Stat("/bin/bash"); err != nil {
			t.Skip("no /bin/bash")
		}
		content, err := bash.Execute(context.Background(), []byte(`{"command":"pwd"}`))
		if err != nil || len(content) != 1 || !strings.Contains(content[0].OfText.Text, hands.Dir()) {
			t.Errorf("pwd in bash: %v %+v; want %s", err, content, hands.Dir())
		}
	}
}
