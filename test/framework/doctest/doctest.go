// Package doctest reads the book's Markdown pages as the tests that keep them true read them: the
// fenced code blocks in order, the commands of a console transcript with the output shown under
// each, and a comparison of shown and printed output that tolerates what changes from run to run.
package doctest

import (
	"regexp"
	"strings"
)

// Block is one fenced code block of a page.
type Block struct {
	Line    int    // the opening fence's line, from 1
	Lang    string // the info string's first word, in lower case; "" for a bare fence
	Text    string // the lines between the fences, each ending in "\n", less the opening fence's indentation
	Adjoins bool   // only blank lines lie between the block before and this one
}

// Blocks returns a page's fenced code blocks in page order. A fence may be indented, as in a list
// item; the block's lines lose that indentation, so that YAML in a list item still parses. A fence
// left open would swallow the rest of the page: Blocks stops there and returns its line as
// unclosed, else 0.
func Blocks(markdown string) (blocks []Block, unclosed int) {
	lines := strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n")
	previousEnd := -1
	for i := 0; i < len(lines); i++ {
		indent, fence, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		end := closingFence(lines, i+1, fence)
		if end < 0 {
			return blocks, i + 1
		}
		blocks = append(blocks, Block{
			Line:    i + 1,
			Lang:    strings.ToLower(firstWord(info)),
			Text:    dedent(lines[i+1:end], indent),
			Adjoins: previousEnd >= 0 && blank(lines[previousEnd+1:i]),
		})
		previousEnd, i = end, end
	}
	return blocks, 0
}

// openingFence reads a line that opens a block: three or more backticks after any indentation,
// then an info string that, as CommonMark has it, holds no backtick (```x``` is inline code).
func openingFence(line string) (indent int, fence, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	indent = len(line) - len(trimmed)
	fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
	info = trimmed[len(fence):]
	if len(fence) < 3 || strings.Contains(info, "`") {
		return 0, "", "", false
	}
	return indent, fence, info, true
}

// closingFence is the index of the line, from start on, that closes a block opened by fence: at
// least as many backticks and nothing else; -1 when there is none.
func closingFence(lines []string, start int, fence string) int {
	for i := start; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
			return i
		}
	}
	return -1
}

// dedent removes the fence's indentation from each line, and no more, so that a here-document or
// YAML keeps its own; a line indented less than the fence, as CommonMark reads it, loses all.
func dedent(lines []string, indent int) string {
	var b strings.Builder
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if cut := len(line) - len(trimmed); cut > indent {
			trimmed = line[indent:]
		}
		b.WriteString(trimmed)
		b.WriteString("\n")
	}
	return b.String()
}

func blank(lines []string) bool {
	for _, line := range lines {
		if strings.TrimSpace(line) != "" {
			return false
		}
	}
	return true
}

func firstWord(s string) string {
	if fields := strings.Fields(s); len(fields) > 0 {
		return fields[0]
	}
	return ""
}

// Command is one `$ ` line of a console transcript and the output the page shows after it.
type Command struct {
	Line    int      // the page's line of its `$ `
	Command string   // what bash runs: without `$ `, with its continuation lines and here-document
	Output  []string // the lines shown after it, up to the next command, less blank lines at the end
}

// hereDocument finds `<<EOF`, `<<-EOF` or `<<'EOF'` in a command, not bash's `<<<` here-string.
var hereDocument = regexp.MustCompile(`(?:^|[^<])<<(-?)\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// Transcript splits a console block into its commands. A command ending in a backslash goes on on
// the next line, and a here-document's lines up to its delimiter belong to the command, as bash
// reads them; neither is output. Lines before the first command are no command's output.
func Transcript(b Block) []Command {
	lines := strings.Split(strings.TrimRight(b.Text, "\n"), "\n")
	var commands []Command
	for i := 0; i < len(lines); i++ {
		text, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			if n := len(commands); n > 0 {
				commands[n-1].Output = append(commands[n-1].Output, lines[i])
			}
			continue
		}
		c := Command{Line: b.Line + 1 + i, Command: text}
		for strings.HasSuffix(c.Command, `\`) && i+1 < len(lines) {
			i++
			c.Command += "\n" + lines[i]
		}
		if m := hereDocument.FindStringSubmatch(c.Command); m != nil {
			for i+1 < len(lines) {
				i++
				c.Command += "\n" + lines[i]
				if end := lines[i]; end == m[2] || (m[1] == "-" && strings.TrimLeft(end, "\t") == m[2]) {
					break
				}
			}
		}
		commands = append(commands, c)
	}
	for i := range commands {
		commands[i].Output = trimBlankEnd(commands[i].Output)
	}
	return commands
}

// trimBlankEnd drops the blank lines a page leaves between an output and the next command, which
// the command does not print.
func trimBlankEnd(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
