package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{64 * mib, 0, 1600},        // before the first collection: the runtime's minimum goal is the floor
		{64 * mib, 1 * mib, 1600},  // 6,300 would put the minimum goal at 252 MiB
		{64 * mib, 8 * mib, 700},   // 8 + 8×7 = 64
		{64 * mib, 16 * mib, 300},  // 16 + 16×3 = 64
		{64 * mib, 32 * mib, 100},  // twice the live heap is the floor
		{64 * mib, 200 * mib, 100}, // past the floor: the default
		{1 * mib, 0, 100},          // a floor under the minimum goal changes nothing
		{1 * mib, 100 * mib, 100},
	} {
		if got := Percent(c.floor, c.live); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.floor/mib, c.live/mib, got, c.want)
		}
	}
}

var sink []byte

// collections allocates n bytes of garbage, a KiB at a time, and returns
// how many collections ran meanwhile.
func collections(n int) uint32 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n / 1024 {
		sink = make([]byte, 1024)
	}
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
}

func percentNow() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// waitPercent waits for the finalizer that tunes after a collection to
// set want (it runs on the runtime's finalizer goroutine, after the
// collection).
func waitPercent(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for percentNow() != want {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d, want %d", percentNow(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// With a floor of 64 MiB, 48 MiB of garbage on a small heap is collected
// at most once; with the default pace, many times. A live heap past half
// the floor gets the default percent back, and a small one the floor
// again.
func TestFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer Stop()
	Stop()
	runtime.GC()
	if n := collections(48 << 20); n < 4 {
		t.Fatalf("without a floor, 48 MiB of garbage made %d collections; the test expects several", n)
	}
	if !Start(64 << 20) {
		t.Fatal("Start = false with GOGC and GOMEMLIMIT unset")
	}
	runtime.GC()
	if n := collections(48 << 20); n > 1 {
		t.Errorf("with a floor of 64 MiB, 48 MiB of garbage made %d collections, want at most 1", n)
	}

	live := make([][]byte, 96)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	waitPercent(t, 100)
	runtime.KeepAlive(live)
	live = nil
	waitPercent(t, 1600)

	Stop()
	if percentNow() != 100 {
		t.Errorf("after Stop the GC percent is %d, want 100", percentNow())
	}
	runtime.GC()
	runtime.GC()
	if p := percentNow(); p != 100 {
		t.Errorf("a collection after Stop set the GC percent to %d", p)
	}
}

// The operator's GOGC or GOMEMLIMIT wins: Start changes nothing.
func TestEnvironmentWins(t *testing.T) {
	defer Stop()
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}[env])
			Stop()
			if Start(DefaultFloor) {
				t.Errorf("Start = true with %s set", env)
			}
			runtime.GC()
			runtime.GC()
			if p := percentNow(); p != 100 {
				t.Errorf("GC percent %d with %s set, want it left at 100", p, env)
			}
		})
	}
}
