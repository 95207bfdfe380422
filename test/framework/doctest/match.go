package doctest

import (
	"fmt"
	"regexp"
	"strings"
)

// AnyLines is a shown line that stands for any number of printed lines, none included.
const AnyLines = "…"

var (
	// kubectl prints ages as 5s, 3m12s, 2h, 4d: a page shows the age of one run.
	age = regexp.MustCompile(`^[0-9]+[smhd]([0-9]+[smh])?$`)
	// <anything> on a page stands for one word that differs between runs: a password, an address.
	placeholder = regexp.MustCompile(`<[^<>\s]+>`)
)

// Match reports how printed differs from the lines a page shows. Lines are compared word by word,
// so that columns may be aligned differently; a shown word that is an age matches any age, "…"
// inside a word matches any text, <name> matches any one word, and a line of "…" alone any number
// of lines.
func Match(shown []string, printed string) error {
	got := trimBlankEnd(strings.Split(strings.TrimRight(printed, "\n"), "\n"))
	if printed == "" {
		got = nil
	}
	if matchFrom(compile(shown), got) {
		return nil
	}
	return fmt.Errorf("the page shows\n%s\nbut the command printed\n%s", indent(shown), indent(got))
}

// compile turns each shown line into a pattern, nil for AnyLines.
func compile(shown []string) []*regexp.Regexp {
	patterns := make([]*regexp.Regexp, len(shown))
	for i, line := range shown {
		if strings.TrimSpace(line) == AnyLines {
			continue
		}
		words := strings.Fields(line)
		for j, word := range words {
			words[j] = wordPattern(word)
		}
		patterns[i] = regexp.MustCompile(`^\s*` + strings.Join(words, `\s+`) + `\s*$`)
	}
	return patterns
}

func wordPattern(word string) string {
	if age.MatchString(word) {
		return `[0-9]+[smhd]([0-9]+[smh])?`
	}
	var b strings.Builder
	rest := word
	for rest != "" {
		loc := placeholder.FindStringIndex(rest)
		literal := rest
		if loc != nil {
			literal = rest[:loc[0]]
		}
		b.WriteString(strings.ReplaceAll(regexp.QuoteMeta(literal), AnyLines, `.*`))
		if loc == nil {
			break
		}
		b.WriteString(`\S+`)
		rest = rest[loc[1]:]
	}
	return b.String()
}

func matchFrom(patterns []*regexp.Regexp, got []string) bool {
	if len(patterns) == 0 {
		return len(got) == 0
	}
	if patterns[0] == nil {
		for skip := 0; skip <= len(got); skip++ {
			if matchFrom(patterns[1:], got[skip:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && patterns[0].MatchString(got[0]) && matchFrom(patterns[1:], got[1:])
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "    (nothing)"
	}
	return "    " + strings.Join(lines, "\n    ")
}
