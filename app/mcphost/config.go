// Package mcphost runs the Model Context Protocol servers the user set up
// (a local command spoken to over stdio, or a streamable-HTTP URL on this
// machine) through the official Go SDK: each starts when first needed,
// lists its tools and runs calls with a timeout and an output limit; a hung
// or crashed server becomes an error, never a hang. It also holds the
// approval policy (ask, all, none) and the user's "always allow" choices.
package mcphost

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Config is one server as the user set it up: Command (a program and its
// arguments) or URL.
type Config struct {
	Name    string            `json:"name"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"` // the only variables the process gets besides baseEnv
	URL     string            `json:"url,omitempty"`
	// CallTimeout bounds one call (0: DefaultCallTimeout).
	CallTimeout time.Duration `json:"call_timeout,omitempty"`
	// StartTimeout bounds the start, to the tool list (0: DefaultStartTimeout).
	StartTimeout time.Duration `json:"start_timeout,omitempty"`
}

// Limits.
const (
	DefaultCallTimeout  = 60 * time.Second
	DefaultStartTimeout = 30 * time.Second
	// MaxMessage bounds one message read from a server; a larger one ends
	// the connection with an error before more is held in memory.
	MaxMessage = 4 << 20
	// MaxResultText bounds the text of one result handed to the model.
	MaxResultText = 32 << 10
	stderrTail    = 8 << 10 // bytes of a server's stderr kept for Details
)

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$`)

// Check refuses a config that cannot run: no name, both or neither of
// command and URL, a URL that is not on this machine.
func (c Config) Check() error {
	if !serverName.MatchString(c.Name) {
		return fmt.Errorf("server name %q must be 1-40 letters, digits, '_', '.' or '-'", c.Name)
	}
	switch {
	case len(c.Command) > 0 && c.URL != "":
		return fmt.Errorf("server %s: give a command or a URL, not both", c.Name)
	case len(c.Command) == 0 && c.URL == "":
		return fmt.Errorf("server %s: give a command or a URL", c.Name)
	case c.URL != "":
		return checkLoopback(c.URL)
	}
	if c.Command[0] == "" {
		return fmt.Errorf("server %s: the command is empty", c.Name)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("server %s: %q is not an environment variable name", c.Name, k)
		}
	}
	return nil
}

// checkLoopback accepts http(s) URLs whose host is a loopback address or
// localhost: Perch talks only to servers on this machine.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("server URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("server URL %q: only http and https are supported", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("server URL %q is not on this machine: only localhost, 127.0.0.0/8 and ::1 are allowed", raw)
}

// SplitCommand splits a command line into words the way a shell would for
// plain words, 'single' and "double" quotes and backslash escapes (no
// variables, globs or pipes: nothing is run through a shell).
func SplitCommand(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}
