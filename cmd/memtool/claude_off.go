//go:build !claude

package main

import "flag"

// claudeLeftOut is the tag that adds run and chat, which this build
// leaves out (claude_verbs.go).
const claudeLeftOut = claudeTag

// setupRun and setupChat are not in this build: the command table's
// leftOut stops the verbs before a setup would be called.
var setupRun, setupChat func(*flag.FlagSet) runFunc
