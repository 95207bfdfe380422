package docs_test

import (
	"regexp"
	"strings"
)

// block is one fenced code block of a page.
type block struct {
	line    int    // the opening fence's line, from 1
	lang    string // the info string's first word, in lower case; "" for a bare fence
	text    string // the lines between the fences, less the opening fence's indentation
	adjoins bool   // only blank lines lie between the block before and this one
}

// scanBlocks returns a page's fenced code blocks in page order. A fence may be indented, as in a
// list item; the block's lines lose that indentation, so that YAML in a list item still parses.
// A fence left open would swallow the rest of the page: scanBlocks stops there and returns its
// line as unclosed, else 0.
func scanBlocks(markdown string) (blocks []block, unclosed int) {
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
		blocks = append(blocks, block{
			line:    i + 1,
			lang:    strings.ToLower(firstWord(info)),
			text:    dedent(lines[i+1:end], indent),
			adjoins: previousEnd >= 0 && blank(lines[previousEnd+1:i]),
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

// command is one `$ ` line of a transcript and the output the page shows after it.
type command struct {
	line   int    // the page's line of its `$ `
	text   string // what bash runs: without `$ `, with its continuation lines and here-document
	output string // the lines shown after it, up to the next command
}

// hereDocument finds `<<EOF`, `<<-EOF` or `<<'EOF'` in a command, not bash's `<<<` here-string.
var hereDocument = regexp.MustCompile(`(?:^|[^<])<<(-?)\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// parseTranscript reads a console block whose first line is at the page's line firstLine. A
// command ending in a backslash goes on on the next line, and a here-document's lines up to its
// delimiter belong to the command, as bash reads them; neither is output.
func parseTranscript(text string, firstLine int) []command {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var commands []command
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "$ ") {
			if n := len(commands); n > 0 {
				commands[n-1].output += lines[i] + "\n"
			}
			continue
		}
		c := command{line: firstLine + i, text: strings.TrimPrefix(lines[i], "$ ")}
		for strings.HasSuffix(c.text, `\`) && i+1 < len(lines) {
			i++
			c.text += "\n" + lines[i]
		}
		if m := hereDocument.FindStringSubmatch(c.text); m != nil {
			for i+1 < len(lines) {
				i++
				c.text += "\n" + lines[i]
				if end := lines[i]; end == m[2] || (m[1] == "-" && strings.TrimLeft(end, "\t") == m[2]) {
					break
				}
			}
		}
		commands = append(commands, c)
	}
	return commands
}

// collapse joins a text's words with single spaces: pages wrap long lines where kubectl does
// not, and indent them in list items.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isRefusal tells whether shown output is the API server refusing a request, as kubectl prints
// it. It is read with its lines joined, so that a page may wrap even the first one.
func isRefusal(output string) bool {
	text := collapse(output)
	return strings.HasPrefix(text, "Error from server") ||
		strings.HasPrefix(text, "The ") && strings.Contains(text, " is invalid:")
}
