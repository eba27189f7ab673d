package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts drives the real memtool binary the way a user does, with the
// scripts in testdata/script. Besides testscript's own commands they have
//
//	exits CODE program [args...]
//
// which runs program like exec and checks its exit status.
func TestScripts(t *testing.T) {
	t.Parallel()
	bin := memtoolBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad CODE %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// TestExecImage views a PNG through memtool exec: the content is a list
// holding one image block whose data is the file's bytes in base64.
func TestExecImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := buf.Bytes()
	if err := os.WriteFile(filepath.Join(dir, "pic.png"), pic, 0o600); err != nil {
		t.Fatal(err)
	}
	// A .png whose bytes are not a PNG is text.
	if err := os.WriteFile(filepath.Join(dir, "fake.png"), []byte("not a picture"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := jsonLine(map[string]any{"command": "view", "path": "/memories/pic.png"}) +
		jsonLine([]map[string]any{{"command": "view", "path": "/memories/fake.png"}, {"command": "view", "path": "/memories/pic.png"}})
	lines := decodeLines(t, execMemtool(t, in, "--store", dir))
	if len(lines) != 2 || len(lines[1]) != 2 {
		t.Fatalf("answers: %v", lines)
	}
	for _, a := range []answer{lines[0][0], lines[1][1]} {
		var blocks []struct {
			Type   string `json:"type"`
			Source struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		}
		if a.IsError {
			t.Fatalf("view pic.png failed: %s", a.Content)
		}
		if err := json.Unmarshal(a.Content, &blocks); err != nil {
			t.Fatalf("content %s is not a list of blocks: %v", a.Content, err)
		}
		if len(blocks) != 1 || blocks[0].Type != "image" || blocks[0].Source.Type != "base64" || blocks[0].Source.MediaType != "image/png" {
			t.Fatalf("content %s, want one base64 image/png block", a.Content)
		}
		data, err := base64.StdEncoding.DecodeString(blocks[0].Source.Data)
		if err != nil {
			t.Fatalf("data is not base64: %v", err)
		}
		if !bytes.Equal(data, pic) {
			t.Errorf("data decodes to %d bytes that are not the file's %d", len(data), len(pic))
		}
	}
	if got, want := lines[1][0].Text(), "Here's the content of /memories/fake.png with line numbers:\n     1\tnot a picture"; got != want {
		t.Errorf("view fake.png: %q, want %q", got, want)
	}

	// The human view names the image instead of printing its bytes.
	cmd := exec.Command(memtoolBinary(t), "view", "--store", dir, "/memories/pic.png")
	cmd.Env = childEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "[image/png image, " + strconv.Itoa(len(pic)) + " bytes]\n"; string(out) != want {
		t.Errorf("memtool view pic.png printed %q, want %q", out, want)
	}
	if strings.Contains(string(out), "PNG") {
		t.Errorf("memtool view printed the image's bytes")
	}
}

// A closed stdout (memtool exec < in | head -1) ends memtool with exit
// status 4, not with SIGPIPE; so does it for a one-command verb.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"exec", "--store", dir}, {"view", "--store", dir, "/memories"}} {
		t.Run(args[0], func(t *testing.T) {
			stdin := strings.Repeat(`{"command":"view","path":"/memories"}`+"\n", 100)
			if code, stderr := runClosedStdout(t, childEnv(), stdin, args...); code != exitBrokenIO {
				t.Errorf("memtool %s with a closed stdout: exit status %d, want %d\nstderr:\n%s", args[0], code, exitBrokenIO, stderr)
			}
		})
	}
}
