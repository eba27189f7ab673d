package main

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// The example store keeps the whole Store contract.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store { return newMapStore() })
}
