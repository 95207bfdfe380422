// Package doctest reads the book's Markdown pages as the tests that keep them true read them: the
// fenced code blocks in order, the commands of a console transcript with the output shown under
// each, and a comparison of shown and printed output that tolerates what changes from run to run.
package doctest

import (
	"strings"
)

// Block is one fenced code block of a page.
type Block struct {
	Lang string // the fence's info string up to its first space: yaml, console, sh, or ""
	Line int    // the 1-based line of the opening fence
	Text string // the lines between the fences, with the fence's indentation removed
}

// Blocks returns the page's fenced code blocks in order. Fences may be indented, as inside a
// list item; the block's lines lose that indentation.
func Blocks(markdown string) []Block {
	var blocks []Block
	var current *Block
	var indent string
	var lines []string
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if current == nil {
			if strings.HasPrefix(trimmed, "```") {
				indent = line[:len(line)-len(trimmed)]
				lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), " ")
				current = &Block{Lang: lang, Line: i + 1}
				lines = nil
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") && strings.TrimSpace(strings.TrimLeft(trimmed, "`")) == "" {
			current.Text = strings.Join(lines, "\n")
			blocks = append(blocks, *current)
			current = nil
			continue
		}
		lines = append(lines, strings.TrimPrefix(line, indent))
	}
	return blocks
}

// Command is one command of a console transcript and the output the page shows for it.
type Command struct {
	Line    int      // the 1-based line of the command on the page
	Command string   // without its "$ " prompt
	Output  []string // the lines shown under it, up to the next command
}

// Transcript splits a console block into its commands: each line starting with "$ " is one, and
// the lines under it, up to the next, are its output. Lines before the first command are ignored.
func Transcript(b Block) []Command {
	var commands []Command
	for i, line := range strings.Split(b.Text, "\n") {
		if command, ok := strings.CutPrefix(line, "$ "); ok {
			commands = append(commands, Command{Line: b.Line + 1 + i, Command: command})
			continue
		}
		if len(commands) > 0 {
			last := &commands[len(commands)-1]
			last.Output = append(last.Output, line)
		}
	}
	for i := range commands {
		commands[i].Output = trimBlankEnd(commands[i].Output)
	}
	return commands
}

func trimBlankEnd(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
