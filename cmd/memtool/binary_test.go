package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool/internal/backendtest"
)

// The tests in this package that drive memtool as a user or a crash would
// run the real binary, built once per test run by memtoolBinary, or by
// plainBinary for the tests that race several processes.

// binaries are the memtool binaries built for this run, by whether the
// race detector is on and by build tags ("" or claudeTag, for run and chat).
var binaries struct {
	sync.Mutex
	built map[binaryKind]*builtBinary
}

type binaryKind struct {
	race bool
	tags string
}

type builtBinary struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Most tests here wait on memtool children (their start, the locks and
	// timeouts they wait out) more than they use a CPU, so unless -parallel
	// is given, four times as many run at once as there are CPUs.
	if !flagGiven("test.parallel") {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	// The S3 tests run in parallel, and their memtool processes inherit
	// the credentials of the S3 test server.
	if err := backendtest.SetS3Env(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	for _, b := range binaries.built {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	os.Exit(code)
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// memtoolBinary returns the path of the memtool binary, building it on first
// use. When the tests run with -race, so is the binary built, and children
// report races on their stderr (see checkNoRace).
func memtoolBinary(t testing.TB) string {
	t.Helper()
	return buildMemtool(t, raceEnabled(), "")
}

// claudeBinary is memtoolBinary built with -tags claude: the build with
// run and chat (see claude_verbs.go).
func claudeBinary(t testing.TB) string {
	t.Helper()
	return buildMemtool(t, raceEnabled(), claudeTag)
}

// binaryFor is the binary that runs args: claudeBinary for run and chat,
// else memtoolBinary, the default build.
func binaryFor(t testing.TB, args []string) string {
	t.Helper()
	if len(args) > 0 && (args[0] == "run" || args[0] == "chat") {
		return claudeBinary(t)
	}
	return memtoolBinary(t)
}

// plainBinary returns the path of a memtool binary built without the race
// detector, for the children of the tests that race several memtool
// processes on one store (startChild). What those tests look for are races
// between processes, which the detector cannot see: it watches the memory
// of one process. Built with -race, these children took most of this
// package's test time. The concurrency within one process still runs under
// the detector: in this test process (the store handles the tests read
// through), in the raced children of memtoolBinary (TestRacingInOneLine
// runs a JSON array's commands concurrently in one child), and in the
// stores' own packages.
func plainBinary(t testing.TB) string {
	t.Helper()
	return buildMemtool(t, false, "")
}

// buildMemtool builds the memtool binary, with the race detector or
// without, and with the build tags given, once per test run.
func buildMemtool(t testing.TB, race bool, tags string) string {
	t.Helper()
	binaries.Lock()
	if binaries.built == nil {
		binaries.built = map[binaryKind]*builtBinary{}
	}
	kind := binaryKind{race, tags}
	b := binaries.built[kind]
	if b == nil {
		b = &builtBinary{}
		binaries.built[kind] = b
	}
	binaries.Unlock()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "memtool-bin-")
		if b.err != nil {
			return
		}
		gocmd, err := exec.LookPath("go")
		if err != nil {
			gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		b.path = filepath.Join(b.dir, "memtool")
		args := []string{"build", "-o", b.path}
		if race {
			args = append(args, "-race")
		}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.Command(gocmd, append(args, ".")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// childEnv is the environment of a memtool child: this one without
// MEMTOOL_STORE, so that only what a test sets picks the store, and without
// the race detector's one-second sleep at exit.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMTOOL_STORE=") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"GORACE=atexit_sleep_ms=0"}, extra...)...)
}

// checkNoRace fails t if a child's stderr holds a race report.
func checkNoRace(t testing.TB, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("the memtool child reported a data race:\n%s", stderr)
	}
}

// runMemtool runs the binary to completion and returns its output and exit
// status.
func runMemtool(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runBuild(t, binaryFor(t, args), env, stdin, args...)
}

// runBuild is runMemtool with the binary bin.
func runBuild(t testing.TB, bin string, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	checkNoRace(t, errOut.String())
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("memtool %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// startPiped starts cmd with a pipe to its stdin and one from its stdout
// (what cmd.Stderr names stays); it fails t if cmd cannot start.
func startPiped(t testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

// answer is one line of `memtool exec` output for one tool input.
type answer struct {
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// Text returns the content of a text answer ("" for an image answer).
func (a answer) Text() string {
	var s string
	if json.Unmarshal(a.Content, &s) != nil {
		return ""
	}
	return s
}

// execMemtool runs `memtool exec` with args, feeds it input and returns its
// stdout. It fails t unless memtool exits 0 with nothing on stderr.
func execMemtool(t testing.TB, input string, args ...string) string {
	t.Helper()
	cmd := exec.Command(memtoolBinary(t), append([]string{"exec"}, args...)...)
	cmd.Env = childEnv()
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	checkNoRace(t, stderr.String())
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("memtool exec %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// decodeLines splits exec output into lines and decodes each line as one
// answer (an object) or a list of answers (an array).
func decodeLines(t testing.TB, out string) [][]answer {
	t.Helper()
	var lines [][]answer
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var batch []answer
		if strings.HasPrefix(line, "[") {
			if err := json.Unmarshal([]byte(line), &batch); err != nil {
				t.Fatalf("answer line %q: %v", line, err)
			}
		} else {
			var a answer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("answer line %q: %v", line, err)
			}
			batch = []answer{a}
		}
		lines = append(lines, batch)
	}
	return lines
}

// jsonLine encodes v as one line of exec input.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}
