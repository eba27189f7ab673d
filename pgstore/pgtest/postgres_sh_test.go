package pgtest

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// callerScript sources .ci/postgres.sh in a shell whose options are set
// (or unset) by its first line, and checks that they are the same after.
const callerScript = `%s
before=$(set +o; shopt -p)
source "$SCRIPT" || exit 9
after=$(set +o; shopt -p)
if [[ "$before" != "$after" ]]; then
	echo "sourcing changed the shell's options:" >&2
	diff <(echo "$before") <(echo "$after") >&2
	exit 8
fi
echo "$MEMTOOL_TEST_POSTGRES"
`

// TestPostgresScript sources .ci/postgres.sh from shells with and without
// set -euo pipefail, and runs it: the caller's options stay as they were,
// and each run gets a database of its own, which later runs leave alone.
func TestPostgresScript(t *testing.T) {
	base, err := url.Parse(URL(t)) // fails or skips without a server
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../.ci/postgres.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Read by the test, the script is part of the key of go test's cache.
	if _, err := os.ReadFile(script); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SCRIPT="+script, "PGHOST="+base.Hostname(), "PGPORT="+base.Port(), "PGUSER="+base.User.Username(), "MEMTOOL_TEST_DB=")
	if base.Port() == "" {
		env = append(env, "PGPORT=5432")
	}
	var urls []string
	for _, args := range [][]string{
		{"-c", strings.Replace(callerScript, "%s", "set +euo pipefail", 1)},
		{"-c", strings.Replace(callerScript, "%s", "set -euo pipefail", 1)},
		{script},
	} {
		cmd := exec.Command("bash", args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash %q: %v\n%s", args[len(args)-1], err, stderr.String())
		}
		u := strings.TrimSpace(string(out))
		u = strings.TrimSuffix(strings.TrimPrefix(u, "export MEMTOOL_TEST_POSTGRES='"), "'")
		urls = append(urls, u)
		t.Cleanup(func() { dropDatabase(t, base.String(), u) })
	}
	seen := map[string]bool{}
	for _, u := range urls {
		if seen[u] {
			t.Errorf("two runs got the same database: %s", u)
		}
		seen[u] = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Errorf("the database of an earlier run is gone: %v", err)
		} else {
			conn.Close(ctx)
		}
		cancel()
	}
}

func dropDatabase(t *testing.T, server, dbURL string) {
	u, err := url.Parse(dbURL)
	if err != nil || !strings.HasPrefix(u.Path, "/memtool_test_") {
		t.Errorf("not a scratch database: %q", dbURL)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Errorf("dropping %s: %v", u.Path, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Errorf("dropping %s: %v", u.Path, err)
	}
}
