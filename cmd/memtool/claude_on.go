//go:build claude

package main

// claudeLeftOut is "" in a build with run and chat (claude_verbs.go).
const claudeLeftOut = ""
