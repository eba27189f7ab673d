//go:build !unix

package server

// appendProcess writes nothing where the process's figures are not read.
func appendProcess(b []byte) []byte { return b }
