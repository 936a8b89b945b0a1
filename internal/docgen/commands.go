package docgen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Command is one inlay command line found in a Markdown file.
type Command struct {
	File string   // the file, as given to Commands
	Line int      // 1-based line of the command (its first line when continued)
	Text string   // the command as written, continuation lines joined
	Args []string // its words after the program name, up to a pipe, redirection or comment
}

// Commands finds the inlay command lines of a Markdown file: lines of
// shell code blocks (```sh, ```bash, ```console, ```shell) and inline code
// spans that start with "inlay", "./inlay" or "go run ./cmd/inlay"
// (after "$ " and environment assignments). Untagged code blocks are
// program output and are left alone; inline spans with "[", "|", "…" or
// "..." are synopses (`inlay plan WORKLOAD [--planner P]`), not commands.
func Commands(file, text string) []Command {
	var out []Command
	lines := strings.Split(text, "\n")
	fence, shell := "", false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			mark := trimmed[:3]
			if fence == "" {
				fence = mark
				lang := strings.TrimSpace(trimmed[3:])
				shell = lang == "sh" || lang == "bash" || lang == "console" || lang == "shell"
			} else if mark == fence {
				fence, shell = "", false
			}
			continue
		}
		if fence != "" {
			if !shell {
				continue
			}
			start := i
			cmd := trimmed
			for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
			}
			if args, ok := inlayArgs(cmd); ok {
				out = append(out, Command{File: file, Line: start + 1, Text: cmd, Args: args})
			}
			continue
		}
		for _, span := range codeSpans(line) {
			if strings.ContainsAny(span, "[|…") || strings.Contains(span, "...") {
				continue
			}
			// A bare `inlay` names the tool or the planner, not a command.
			if args, ok := inlayArgs(span); ok && len(args) > 0 {
				out = append(out, Command{File: file, Line: i + 1, Text: span, Args: args})
			}
		}
	}
	return out
}

// codeSpans returns the inline code spans of one line of Markdown.
func codeSpans(line string) []string {
	var spans []string
	for {
		a := strings.Index(line, "`")
		if a < 0 {
			return spans
		}
		ticks := 1
		for a+ticks < len(line) && line[a+ticks] == '`' {
			ticks++
		}
		mark := strings.Repeat("`", ticks)
		rest := line[a+ticks:]
		b := strings.Index(rest, mark)
		if b < 0 {
			return spans
		}
		spans = append(spans, strings.TrimSpace(rest[:b]))
		line = rest[b+ticks:]
	}
}

// inlayArgs splits a shell line into words and returns those after the
// program name when the program is inlay; the words stop at the first
// pipe, list operator, redirection or comment.
func inlayArgs(cmd string) ([]string, bool) {
	cmd = strings.TrimPrefix(strings.TrimSpace(cmd), "$ ")
	words := shellWords(cmd)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) >= 1 && (words[0] == "inlay" || words[0] == "./inlay"):
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && (words[2] == "./cmd/inlay" || words[2] == "github.com/inlay-dev/inlay/cmd/inlay"):
		return words[3:], true
	}
	return nil, false
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shellWords splits a line as a POSIX shell would (quotes, backslashes),
// without expanding anything, and stops at an unquoted |, ;, &, <, > or a
// word that starts with #.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|;&<>", c) >= 0:
			if inWord && c == '>' && (cur.String() == "2" || cur.String() == "1") {
				cur.Reset()
				inWord = false
			}
			flush()
			return words
		case c == '#' && !inWord:
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// Check checks one command line against a fresh command tree: the
// subcommand exists and every flag exists and parses. newRoot must build a
// new tree each time (parsing sets the flags' values).
func Check(newRoot func() *cobra.Command, args []string) error {
	root := newRoot()
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if c.HasAvailableSubCommands() && !c.Runnable() {
		if pos := positional(c, rest); len(pos) > 0 {
			return fmt.Errorf("unknown command %q for %q", pos[0], c.CommandPath())
		}
	}
	if c == root && len(positional(c, rest)) > 0 {
		return fmt.Errorf("unknown command %q for %q", positional(c, rest)[0], c.CommandPath())
	}
	if err := c.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
		return fmt.Errorf("%s: %w", c.CommandPath(), err)
	}
	return nil
}

// positional returns the words of args that are not flags or flag values.
func positional(c *cobra.Command, args []string) []string {
	fs := c.Flags()
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(pos, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			if f := fs.Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if f := fs.ShorthandLookup(a[1:2]); f != nil && len(a) == 2 && f.NoOptDefVal == "" {
				i++
			}
		default:
			pos = append(pos, a)
		}
	}
	return pos
}

// Complete reports whether a command line that Check accepts is a whole
// command and not a mention of one (`inlay plan` in running text): its
// command runs and takes the positional arguments given.
func Complete(newRoot func() *cobra.Command, args []string) bool {
	c, rest, err := newRoot().Find(args)
	if err != nil || !c.Runnable() || c.ParseFlags(rest) != nil {
		return false
	}
	return c.ValidateArgs(c.Flags().Args()) == nil
}
