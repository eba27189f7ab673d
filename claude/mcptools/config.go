package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
)

// Config is an MCP configuration file as Claude Desktop
// (claude_desktop_config.json) and Claude Code (.mcp.json) read it:
//
//	{"mcpServers": {
//		"notes":  {"command": "notes-server", "args": ["--dir", "notes"], "env": {"LEVEL": "info"}},
//		"issues": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer …"}}
//	}}
//
// Other top-level keys (Claude Desktop keeps its preferences there) are
// ignored. Values are used as written: "${VAR}" is not expanded.
type Config struct {
	Servers map[string]Server `json:"mcpServers"`
}

// Server is one entry of mcpServers.
type Server struct {
	// Type is "stdio" (the default when Command is set), "http" (the
	// streamable HTTP transport; the default when only URL is set) or
	// "sse" (the older HTTP+SSE transport).
	Type string `json:"type,omitempty"`
	// Command and Args start a stdio server; Env adds to (or replaces
	// entries of) its environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an http or sse server. The headers go only
	// to URL's host (and its subdomains): a request the server redirects
	// to another host goes without them.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// serverName is what a server's name may be: it becomes part of its tools'
// names, which the Messages API restricts to these characters.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ReadConfig reads and checks a configuration file.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcptools: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return cfg, nil
}

// ParseConfig parses and checks a configuration: every server has a name
// of letters, digits, "_" and "-", a known type, and the command or URL
// its type needs; each server's Type is set to the one it defaults to.
func ParseConfig(data []byte) (*Config, error) {
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("mcptools: config is not valid JSON: %w", err)
	}
	if cfg.Servers == nil {
		return nil, errors.New(`mcptools: config has no "mcpServers" object`)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if !serverName.MatchString(name) {
			errs = append(errs, fmt.Errorf("mcptools: server %q: a name may hold only letters, digits, _ and -", name))
		}
		if s.Type == "" {
			s.Type = "stdio"
			if s.Command == "" && s.URL != "" {
				s.Type = "http"
			}
		}
		switch {
		case s.Type == "stdio" && s.Command == "":
			errs = append(errs, fmt.Errorf(`mcptools: server %q: a stdio server needs "command"`, name))
		case (s.Type == "http" || s.Type == "sse") && s.URL == "":
			errs = append(errs, fmt.Errorf(`mcptools: server %q: an %s server needs "url"`, name, s.Type))
		case s.Type != "stdio" && s.Type != "http" && s.Type != "sse":
			errs = append(errs, fmt.Errorf(`mcptools: server %q: unknown type %q (want "stdio", "http" or "sse")`, name, s.Type))
		}
		cfg.Servers[name] = s
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &cfg, nil
}
