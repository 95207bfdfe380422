package docs_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
)

// stepKind is what the test does with a block, or with one command of a transcript.
type stepKind int

const (
	// applyStep applies the example objects of a yaml block.
	applyStep stepKind = iota
	// parseStep parses a yaml block that holds no object: a fragment, values, a config file.
	parseStep
	// runStep runs a transcript's command whose output is a refusal.
	runStep
	// strayStep is a refusal shown where no example produces it, which the test cannot check.
	strayStep
)

// step is one check of a page, run in page order.
type step struct {
	kind stepKind
	line int    // the block's opening fence, or the command's `$ ` line
	lang string // the block's info string
	docs []document
	// refusal is what the page shows the API server answering a yaml block with; nil when the
	// page shows the block accepted.
	refusal *shown
	command doctest.Command
	text    string // a stray block's content
}

// shown is output a page shows, and the line of its block.
type shown struct {
	line int
	text string
}

// name is the step's subtest name: where it is on the page.
func (s step) name() string {
	if s.kind == runStep {
		return fmt.Sprintf("line %d command", s.line)
	}
	return fmt.Sprintf("line %d %s", s.line, s.lang)
}

// document is one YAML document of a yaml block.
type document struct {
	line       int // its first line on the page
	text       string
	apiVersion string
	kind       string
	namespace  string // metadata.namespace, when the object names one
	err        error  // the document does not parse
	empty      bool   // nothing but comments and blank lines
}

func (d document) object() bool { return d.apiVersion != "" && d.kind != "" }

func isYAML(lang string) bool { return lang == "yaml" || lang == "yml" }

// isTranscript is true of blocks read for `$ ` commands. A bare fence counts: the pages and the
// README show refusals in bare blocks, and an unlabelled refusal must not escape the check.
func isTranscript(lang string) bool { return lang == "console" || lang == "" }

// showsOutput is true of the blocks that may show what the yaml block before them gets.
func showsOutput(lang string) bool { return lang == "console" || lang == "text" || lang == "" }

// planSteps turns a page's blocks into its checks, in page order.
func planSteps(blocks []doctest.Block) []step {
	var steps []step
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		switch {
		case isYAML(b.Lang):
			s := yamlStep(b)
			if next := i + 1; s.kind == applyStep && next < len(blocks) && blocks[next].Adjoins &&
				showsOutput(blocks[next].Lang) && isRefusal(blocks[next].Text) {
				s.refusal = &shown{line: blocks[next].Line, text: blocks[next].Text}
				i = next
			}
			steps = append(steps, s)
		case isTranscript(b.Lang) && strings.Contains("\n"+b.Text, "\n$ "):
			for _, c := range doctest.Transcript(b) {
				if isRefusal(output(c)) {
					steps = append(steps, step{kind: runStep, line: c.Line, lang: b.Lang, command: c})
				}
			}
		case showsOutput(b.Lang) && isRefusal(b.Text):
			steps = append(steps, step{kind: strayStep, line: b.Line, lang: b.Lang, text: b.Text})
		}
	}
	return steps
}

// output is a command's shown lines as one text, the form kubectl's output is judged and compared
// in, since a page wraps a refusal's lines where kubectl does not.
func output(c doctest.Command) string {
	return strings.Join(c.Output, "\n")
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

// yamlStep parses a yaml block: an applyStep when any of its documents is an object.
func yamlStep(b doctest.Block) step {
	s := step{kind: parseStep, line: b.Line, lang: b.Lang, docs: splitDocuments(b.Text, b.Line+1)}
	for _, d := range s.docs {
		if d.object() {
			s.kind = applyStep
		}
	}
	return s
}

// documentSeparator is YAML's `---` line, which may carry a comment.
var documentSeparator = regexp.MustCompile(`^---(\s.*)?$`)

// splitDocuments parses the YAML documents of a block whose first line is at the page's line
// firstLine, keeping each document's text and line so that it can be applied and pointed at.
func splitDocuments(text string, firstLine int) []document {
	var docs []document
	start, lines := 0, strings.Split(text, "\n")
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && !documentSeparator.MatchString(lines[i]) {
			continue
		}
		d := parseDocument(strings.Join(lines[start:i], "\n"), firstLine+start)
		if !d.empty {
			docs = append(docs, d)
		}
		start = i + 1
	}
	return docs
}

func parseDocument(text string, line int) document {
	d := document{line: line, text: text}
	var value any
	if err := yaml.UnmarshalStrict([]byte(text), &value); err != nil {
		d.err = fmt.Errorf("%s", onPage(err.Error(), line))
		return d
	}
	d.empty = value == nil
	object, _ := value.(map[string]any)
	d.apiVersion, _ = object["apiVersion"].(string)
	d.kind, _ = object["kind"].(string)
	if metadata, ok := object["metadata"].(map[string]any); ok {
		d.namespace, _ = metadata["namespace"].(string)
	}
	return d
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// onPage turns the line numbers of a YAML parser's message, which count from the document's first
// line, into the page's.
func onPage(message string, firstLine int) string {
	return yamlLine.ReplaceAllStringFunc(message, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return fmt.Sprintf("line %d of the page", n+firstLine-1)
	})
}
