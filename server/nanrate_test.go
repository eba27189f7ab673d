package server_test

import (
	"context"
	"math"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

type noKeys struct{ server.Verifier }

// A rate that is not a number (a flag given "NaN") is no limit at all to
// the rate limiter, which lets every request through: New refuses it
// rather than serve without the limit the operator meant to set.
func TestNaNRateRefused(t *testing.T) {
	open := func(context.Context, string) (memtool.Store, error) { return memstore.New(), nil }
	for _, c := range []server.Config{
		{Rate: math.NaN()},
		{FailRate: math.NaN()},
	} {
		c.Keys, c.Open = noKeys{}, open
		if _, err := server.New(c); err == nil {
			t.Errorf("New(Rate %v, FailRate %v): no error", c.Rate, c.FailRate)
		}
	}
}
