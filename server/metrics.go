package server

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus metrics.
type metrics struct {
	requests    *prometheus.CounterVec   // by route, command, outcome
	latency     *prometheus.HistogramVec // by route
	inFlight    prometheus.Gauge
	storeErrors prometheus.Counter

	counters sync.Map // requestLabels → prometheus.Counter, so a request looks none up by hashing
}

type requestLabels struct{ route, command, outcome string }

// request counts one request with its labels.
func (m *metrics) request(route, command, outcome string) {
	l := requestLabels{route, command, outcome}
	c, ok := m.counters.Load(l)
	if !ok {
		c, _ = m.counters.LoadOrStore(l, m.requests.WithLabelValues(route, command, outcome))
	}
	c.(prometheus.Counter).Inc()
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memtool_http_requests_total",
			Help: "HTTP requests by route, tool command (turn for an array, - for none) and outcome (ok, tool_error, unauthorized, forbidden, rate_limited, client_error, server_error).",
		}, []string{"route", "command", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memtool_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "memtool_http_requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memtool_store_errors_total",
			Help: "Unexpected failures of the store or the key store (each logged with its detail).",
		}),
	}
	reg.MustRegister(m.requests, m.latency, m.inFlight, m.storeErrors)
	return m
}

// countingHandler counts the errors a Memory logs (its unexpected store
// failures) and passes every record on.
type countingHandler struct {
	slog.Handler
	errors prometheus.Counter
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
