package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/secrets"
)

// bypassToken is a GitHub token as the secrets policy finds it.
const bypassToken = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

// secretsOnDisk returns the files under root (the policies' own
// included) that hold what the secrets policy finds, in their name or
// their content.
func secretsOnDisk(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if secrets.Scan([]byte(p)) != nil || secrets.Scan(data) != nil {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// A path that holds a secret is refused under the secrets policy, which
// scans names too; an edit of such a path that does not exist must not
// leave the name in the store either. With expiry on, the edit's use was
// recorded in the access index (.memtool-expiry.json) before the store
// said there was no such file, so the token landed on disk in the
// index, through str_replace or insert of a file that was never there.
func TestBypassSecretInEditedPathStaysOut(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{
		`{"secrets":"reject","expiry":true}`,
		`{"secrets":"redact","expiry":true,"history":{}}`,
	} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			store := filepath.Join(t.TempDir(), "memories")
			vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, policy)}
			p := "/memories/notes-" + bypassToken + ".md"
			lines := fmt.Sprintf(`{"command":"str_replace","path":%q,"old_str":"a","new_str":"b"}`+"\n"+
				`{"command":"insert","path":%q,"insert_line":0,"insert_text":"x"}`+"\n"+
				`{"command":"create","path":"/memories/ok.md","file_text":"x"}`+"\n", p, p)
			out := mustRunCLI(t, vars, lines, "exec", "--store", store)
			var answers []answer
			for line := range strings.Lines(out) {
				var a answer
				if err := json.Unmarshal([]byte(line), &a); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				answers = append(answers, a)
			}
			if len(answers) != 3 || !answers[0].IsError || !answers[1].IsError || answers[2].IsError {
				t.Fatalf("answers %s, want two refusals and a created file", out)
			}
			for _, a := range answers[:2] {
				if !strings.Contains(a.Text(), "GitHub token") {
					t.Errorf("edit of a path holding a token answered %q, want the secrets policy's refusal", a.Text())
				}
			}
			if found := secretsOnDisk(t, store); found != nil {
				t.Errorf("the token is in the store after edits of a path that held it: %v", found)
			}
		})
	}
}

// Edits of files that do not exist must not grow the store: the limits
// policy counts the memory's files, not the expiry index, which holds a
// name for every file used. An edit records its use before it runs (see
// expiry.Store.Update); one that finds no file takes it back. Before it
// did, a model sending str_replace to ever new paths of 1,000 bytes added
// near that many bytes to the index each time, past max_bytes, up to the
// index's 64 MiB cap, after which expiry records nothing and gc fails:
// 100 such edits under a quota of 1,000 bytes left an index of some 75 KB
// naming 100 files that never were.
func TestBypassExpiryIndexNamesOnlyFiles(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "memories")
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"limits":{"max_files":5,"max_bytes":1000,"max_path_length":1024},"expiry":true}`)}
	var lines strings.Builder
	lines.WriteString(`{"command":"create","path":"/memories/real.md","file_text":"x"}` + "\n")
	for i := range 100 {
		seg := strings.Repeat("n", 240) // a name may be 255 bytes long, a path 1,024
		p := fmt.Sprintf("/memories/%03d/%s/%s/%s/x.md", i, seg, seg, seg)
		fmt.Fprintf(&lines, `{"command":"str_replace","path":%q,"old_str":"a","new_str":"b"}`+"\n", p)
	}
	mustRunCLI(t, vars, lines.String(), "exec", "--store", store)
	data, err := os.ReadFile(filepath.Join(store, ".memtool-expiry.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ix struct{ Access map[string]int64 }
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	for name := range ix.Access {
		if _, err := os.Stat(filepath.Join(store, name)); os.IsNotExist(err) {
			t.Errorf("the access index (%d bytes, under a quota of 1,000) names %.40s…, which is no file", len(data), name)
			break
		}
	}
}
