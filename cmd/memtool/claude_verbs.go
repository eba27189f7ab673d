package main

// run and chat talk to Claude through the Anthropic SDK, which is about a
// quarter of the binary; they are in a build with -tags claude (and in
// release binaries). A build without the tag still lists them, and says
// how to get them (command.leftOut). The tag's two sides are
// claude_on.go and claude_off.go.

// claudeTag is the build tag that adds run and chat.
const claudeTag = "claude"

// chatAbout is the help of chat, beside its flags.
const chatAbout = `In the chat, a line is a message to Claude, except:
  /help          show this
  /exit, /quit   end the chat (as Ctrl-D does)
Ctrl-C ends the turn in progress, not the chat.`
