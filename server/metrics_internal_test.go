package server

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsLabelEscaping: label values holding quotes, backslashes and
// newlines (a mounted route's pattern is the operator's text) come back
// whole from Prometheus' parser.
func TestMetricsLabelEscaping(t *testing.T) {
	var m metrics
	odd := "GET /a\"b\\c\nd/{x...}"
	m.request(odd, "-", "ok")
	m.request(odd, "-", "ok")
	m.latencyOf(odd).Observe(0.003)
	m.latencyOf(odd).Observe(100) // above every bound: +Inf only
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(m.appendTo(nil))))
	if err != nil {
		t.Fatal(err)
	}
	req := fams["memtool_http_requests_total"].Metric
	if len(req) != 1 || req[0].Counter.GetValue() != 2 {
		t.Fatalf("requests: %v", req)
	}
	for _, l := range req[0].Label {
		if l.GetName() == "route" && l.GetValue() != odd {
			t.Errorf("route came back as %q", l.GetValue())
		}
	}
	h := fams["memtool_http_request_duration_seconds"].Metric[0].Histogram
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 100.003 {
		t.Errorf("histogram count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.Bucket {
		want := uint64(0)
		switch {
		case math.IsInf(b.GetUpperBound(), +1):
			want = 2
		case b.GetUpperBound() >= 0.005:
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}
