package server

import (
	"context"

	"github.com/memtool/memtool"
)

// readOnly is the memory of a read-scope key: reads pass, with the cheap
// ways of the store below (listing a large directory by names, streaming
// a large file), and every write is refused with a text the model reads,
// before anything is touched.
type readOnly struct {
	memtool.Forwarder
	memtool.ReadThrough
}

var (
	_ memtool.Wrapper     = readOnly{}
	_ memtool.Renamer     = readOnly{}
	_ memtool.RemoveAller = readOnly{}
)

// readOnlyRefusal is what the model reads when a read-scope key writes.
const readOnlyRefusal memtool.Refusal = "This memory is read-only for this API key (scope read): view works; create, str_replace, insert, delete and rename are refused. Nothing was changed."

func newReadOnly(s memtool.Store) readOnly {
	return readOnly{Forwarder: memtool.Forward(s, nil), ReadThrough: memtool.PassReads(s)}
}

func (readOnly) WriteFile(context.Context, string, []byte, memtool.WriteMode) error {
	return readOnlyRefusal
}

func (readOnly) Update(context.Context, string, int64, func([]byte) ([]byte, error)) error {
	return readOnlyRefusal
}

func (readOnly) Mkdir(context.Context, string) error          { return readOnlyRefusal }
func (readOnly) Remove(context.Context, string) error         { return readOnlyRefusal }
func (readOnly) RemoveAll(context.Context, string) error      { return readOnlyRefusal }
func (readOnly) Rename(context.Context, string, string) error { return readOnlyRefusal }
