package server

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// metrics are the server's own metrics, served at /metrics in the
// Prometheus text format (version 0.0.4). They are kept here rather than
// with Prometheus' client library, whose packages (and their init work)
// made every memtool command's binary 3.3 MB larger and slower to start;
// see docs/serve.md for the list of series.
type metrics struct {
	requests    sync.Map // requestLabels → *atomic.Uint64
	latency     sync.Map // route → *histogram
	inFlight    atomic.Int64
	storeErrors counter
}

type requestLabels struct{ route, command, outcome string }

// counter is a monotonic count that a slog handler can also bump.
type counter struct{ n atomic.Uint64 }

func (c *counter) Inc() { c.n.Add(1) }

// request counts one request with its labels.
func (m *metrics) request(route, command, outcome string) {
	l := requestLabels{route, command, outcome}
	c, ok := m.requests.Load(l)
	if !ok {
		c, _ = m.requests.LoadOrStore(l, new(atomic.Uint64))
	}
	c.(*atomic.Uint64).Add(1)
}

// latencyOf is the latency histogram of a route, made on first use.
func (m *metrics) latencyOf(route string) *histogram {
	h, ok := m.latency.Load(route)
	if !ok {
		h, _ = m.latency.LoadOrStore(route, &histogram{counts: make([]atomic.Uint64, len(latencyBuckets)+1)})
	}
	return h.(*histogram)
}

var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// histogram counts observations per bucket (not cumulated: the last
// counter is for values above every bound) and sums them. A scrape
// derives _count from the buckets, so the two always agree.
type histogram struct {
	counts []atomic.Uint64
	sum    atomic.Uint64 // float64 bits
}

func (h *histogram) Observe(v float64) {
	h.counts[sort.SearchFloat64s(latencyBuckets, v)].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// serveMetrics writes every metric in the text exposition format.
func (m *metrics) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b []byte
	b = m.appendTo(b)
	b = appendRuntime(b)
	b = appendProcess(b)
	w.Write(b)
}

func (m *metrics) appendTo(b []byte) []byte {
	b = appendHeader(b, "memtool_http_requests_total", "counter",
		"HTTP requests by route, tool command (turn for an array, - for none) and outcome (ok, tool_error, unauthorized, forbidden, rate_limited, client_error, server_error, cancelled: a failure answered after the client left or a shutdown gave up on the request).")
	var reqs []requestLabels
	m.requests.Range(func(k, _ any) bool { reqs = append(reqs, k.(requestLabels)); return true })
	slices.SortFunc(reqs, func(a, b requestLabels) int {
		return strings.Compare(a.route+"\x00"+a.command+"\x00"+a.outcome, b.route+"\x00"+b.command+"\x00"+b.outcome)
	})
	for _, l := range reqs {
		c, _ := m.requests.Load(l)
		b = append(b, "memtool_http_requests_total"...)
		b = appendLabels(b, "command", l.command, "outcome", l.outcome, "route", l.route)
		b = appendUint(b, c.(*atomic.Uint64).Load())
	}

	const lat = "memtool_http_request_duration_seconds"
	b = appendHeader(b, lat, "histogram", "Time to answer an HTTP request, by route.")
	var routes []string
	m.latency.Range(func(k, _ any) bool { routes = append(routes, k.(string)); return true })
	slices.Sort(routes)
	for _, route := range routes {
		v, _ := m.latency.Load(route)
		h := v.(*histogram)
		var total uint64
		for i := range h.counts {
			total += h.counts[i].Load()
			le := "+Inf"
			if i < len(latencyBuckets) {
				le = formatFloat(latencyBuckets[i])
			}
			b = append(b, lat+"_bucket"...)
			b = appendLabels(b, "route", route, "le", le)
			b = appendUint(b, total)
		}
		b = append(b, lat+"_sum"...)
		b = appendLabels(b, "route", route)
		b = appendFloat(b, math.Float64frombits(h.sum.Load()))
		b = append(b, lat+"_count"...)
		b = appendLabels(b, "route", route)
		b = appendUint(b, total)
	}

	b = appendGauge(b, "memtool_http_requests_in_flight", "HTTP requests being answered.", float64(m.inFlight.Load()))
	return appendCounter(b, "memtool_store_errors_total", "Unexpected failures of the store or the key store (each logged with its detail).", float64(m.storeErrors.n.Load()))
}

// appendRuntime writes the Go runtime's figures under the names
// Prometheus' Go collector gives them.
func appendRuntime(b []byte) []byte {
	b = appendGauge(b, "go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	b = appendGauge(b, "go_threads", "Number of OS threads created.", float64(threads))
	b = appendHeader(b, "go_info", "gauge", "Information about the Go environment.")
	b = append(b, "go_info"...)
	b = appendLabels(b, "version", runtime.Version())
	b = append(b, "1\n"...)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b = appendGauge(b, "go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc))
	b = appendGauge(b, "go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse))
	b = appendGauge(b, "go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys))
	b = appendCounter(b, "go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", float64(ms.TotalAlloc))
	b = appendCounter(b, "go_gc_cycles_total", "Number of completed GC cycles.", float64(ms.NumGC))
	b = appendGauge(b, "go_gc_pause_seconds_total", "Total time the world was stopped for garbage collection.", float64(ms.PauseTotalNs)/1e9)
	gogc := []rtmetrics.Sample{{Name: "/gc/gogc:percent"}}
	rtmetrics.Read(gogc)
	return appendGauge(b, "go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function.", float64(gogc[0].Value.Uint64()))
}

func appendHeader(b []byte, name, typ, help string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, helpEscaper.Replace(help)...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

func appendGauge(b []byte, name, help string, v float64) []byte {
	return appendOne(b, name, "gauge", help, v)
}

func appendCounter(b []byte, name, help string, v float64) []byte {
	return appendOne(b, name, "counter", help, v)
}

// appendOne writes a metric of one series, without labels.
func appendOne(b []byte, name, typ, help string, v float64) []byte {
	b = appendHeader(b, name, typ, help)
	b = append(b, name...)
	b = append(b, ' ')
	return appendFloat(b, v)
}

// appendLabels writes {name="value",...} and the space before the value;
// nameValues alternate names and values.
func appendLabels(b []byte, nameValues ...string) []byte {
	b = append(b, '{')
	for i := 0; i < len(nameValues); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, nameValues[i]...)
		b = append(b, `="`...)
		b = append(b, labelEscaper.Replace(nameValues[i+1])...)
		b = append(b, '"')
	}
	return append(b, "} "...)
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func appendUint(b []byte, v uint64) []byte {
	return append(strconv.AppendUint(b, v, 10), '\n')
}

func appendFloat(b []byte, v float64) []byte {
	return append(append(b, formatFloat(v)...), '\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// countingHandler counts the errors a Memory logs (its unexpected store
// failures) and passes every record on.
type countingHandler struct {
	slog.Handler
	errors *counter
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.errors.Inc()
	}
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(attrs), h.errors}
}

func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(name), h.errors}
}
