package server_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/memtool/memtool/internal/gotool"
	"github.com/memtool/memtool/keys"
)

// scrape reads /metrics and parses it with Prometheus' own text parser,
// as a Prometheus server would.
func scrape(t *testing.T, f *fixture) map[string]*dto.MetricFamily {
	t.Helper()
	r := f.do(t, "GET", "/metrics", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("/metrics: %d %q", r.status, r.header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("Prometheus cannot parse /metrics: %v\n%s", err, r.body)
	}
	return fams
}

// one is the value of the family's only series (or of the series whose
// labels are the given name=value pairs) as a float, whatever its type.
func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	fam := fams[name]
	if fam == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range fam.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no series of %s with %v", name, labels)
	return 0
}

// TestMetricsParse: /metrics is valid Prometheus text; each family has
// its type; the request counts, the latency histogram (cumulative
// buckets whose +Inf bucket is the count), the in-flight gauge and the
// Go and process figures hold what happened and what the process is.
func TestMetricsParse(t *testing.T) {
	f := newFixture(t, nil)
	_, a := f.key(t, "alice", keys.Write)
	for range 3 {
		f.do(t, "POST", "/v1/memory", a, view) // a tool error: no such file
	}
	f.do(t, "POST", "/v1/memory", a, fmt.Sprintf(create, "alice"))
	f.do(t, "POST", "/v1/memory", "", view)
	f.do(t, "GET", "/healthz", "", "")

	fams := scrape(t, f)
	for name, typ := range map[string]dto.MetricType{
		"memtool_http_requests_total":           dto.MetricType_COUNTER,
		"memtool_http_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"memtool_http_requests_in_flight":       dto.MetricType_GAUGE,
		"memtool_store_errors_total":            dto.MetricType_COUNTER,
		"go_goroutines":                         dto.MetricType_GAUGE,
		"go_threads":                            dto.MetricType_GAUGE,
		"go_info":                               dto.MetricType_GAUGE,
		"go_memstats_alloc_bytes":               dto.MetricType_GAUGE,
		"go_memstats_alloc_bytes_total":         dto.MetricType_COUNTER,
		"go_memstats_heap_inuse_bytes":          dto.MetricType_GAUGE,
		"go_memstats_sys_bytes":                 dto.MetricType_GAUGE,
		"go_gc_cycles_total":                    dto.MetricType_COUNTER,
		"go_gc_pause_seconds_total":             dto.MetricType_GAUGE,
		"go_gc_gogc_percent":                    dto.MetricType_GAUGE,
		"process_cpu_seconds_total":             dto.MetricType_COUNTER,
		"process_max_fds":                       dto.MetricType_GAUGE,
	} {
		if fam := fams[name]; fam == nil || fam.GetType() != typ {
			t.Errorf("%s: %v, want type %v", name, fam, typ)
		}
	}
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"route", "/v1/memory", "command", "view", "outcome", "tool_error"}, 3},
		{[]string{"route", "/v1/memory", "command", "create", "outcome", "ok"}, 1},
		{[]string{"route", "/v1/memory", "command", "-", "outcome", "unauthorized"}, 1},
		{[]string{"route", "/healthz", "command", "-", "outcome", "ok"}, 1},
	} {
		if got := one(t, fams, "memtool_http_requests_total", c.labels...); got != c.want {
			t.Errorf("requests %v = %v, want %v", c.labels, got, c.want)
		}
	}
	if got := one(t, fams, "memtool_http_request_duration_seconds", "route", "/v1/memory"); got != 5 {
		t.Errorf("latency count of /v1/memory = %v, want 5", got)
	}
	for _, m := range fams["memtool_http_request_duration_seconds"].Metric {
		h := m.Histogram // every route has one, most of them empty here
		prev := uint64(0)
		for _, b := range h.Bucket {
			if b.GetCumulativeCount() < prev {
				t.Errorf("buckets not cumulative: %v", h.Bucket)
			}
			prev = b.GetCumulativeCount()
		}
		if (h.GetSampleSum() <= 0) != (h.GetSampleCount() == 0) || h.GetSampleSum() > 60*float64(h.GetSampleCount()) {
			t.Errorf("latency sum %v for %d requests", h.GetSampleSum(), h.GetSampleCount())
		}
		if n := len(h.Bucket); n != 16 || h.Bucket[n-2].GetUpperBound() != 30 || !math.IsInf(h.Bucket[n-1].GetUpperBound(), +1) || prev != h.GetSampleCount() {
			t.Errorf("buckets %v, count %d", h.Bucket, h.GetSampleCount())
		}
	}
	if got := one(t, fams, "memtool_http_requests_in_flight"); got != 1 { // the scrape itself
		t.Errorf("in flight = %v, want 1", got)
	}
	if got := one(t, fams, "go_goroutines"); got < 2 {
		t.Errorf("go_goroutines = %v", got)
	}
	if got := one(t, fams, "process_cpu_seconds_total"); got <= 0 {
		t.Errorf("process_cpu_seconds_total = %v", got)
	}
	if got := one(t, fams, "go_info", "version", runtime.Version()); got != 1 {
		t.Errorf("go_info = %v", got)
	}
	if runtime.GOOS == "linux" {
		if got := one(t, fams, "process_virtual_memory_bytes"); got < one(t, fams, "process_resident_memory_bytes") {
			t.Errorf("process_virtual_memory_bytes = %v", got)
		}
		if got := one(t, fams, "process_resident_memory_bytes"); got < 1<<20 {
			t.Errorf("process_resident_memory_bytes = %v", got)
		}
		if got := one(t, fams, "process_open_fds"); got < 3 || got > one(t, fams, "process_max_fds") {
			t.Errorf("process_open_fds = %v", got)
		}
		now := float64(time.Now().Unix())
		if got := one(t, fams, "process_start_time_seconds"); got > now+1 || got < now-24*3600 {
			t.Errorf("process_start_time_seconds = %v, now %v", got, now)
		}
	}
}

// TestMetricsUnderLoad: requests counted while others scrape are all
// counted, once each (run with -race).
func TestMetricsUnderLoad(t *testing.T) {
	f := newFixture(t, nil)
	_, a := f.key(t, "alice", keys.Write)
	const workers, each = 4, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				f.do(t, "POST", "/v1/memory", a, view)
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			scrape(t, f)
		}
	})
	wg.Wait()
	fams := scrape(t, f)
	if got := one(t, fams, "memtool_http_requests_total", "command", "view"); got != workers*each {
		t.Errorf("views counted: %v, want %d", got, workers*each)
	}
	if got := one(t, fams, "memtool_http_request_duration_seconds", "route", "/v1/memory"); got != workers*each {
		t.Errorf("latency count: %v, want %d", got, workers*each)
	}
	for _, m := range fams["memtool_http_request_duration_seconds"].Metric {
		if sum := m.Histogram.GetSampleSum(); math.IsNaN(sum) || (sum > 0) != (m.Histogram.GetSampleCount() > 0) {
			t.Errorf("latency sum %v for %d requests", sum, m.Histogram.GetSampleCount())
		}
	}
}

// TestServerLeavesOutPrometheusClient: the metrics are written without
// Prometheus' client library (and so without protobuf), which every
// memtool command would otherwise link and initialise.
func TestServerLeavesOutPrometheusClient(t *testing.T) {
	for _, pkg := range gotool.Deps(t, "", "../cmd/memtool") {
		if strings.HasPrefix(pkg, "github.com/prometheus/") || strings.HasPrefix(pkg, "google.golang.org/protobuf") {
			t.Errorf("memtool imports %s", pkg)
		}
	}
}
