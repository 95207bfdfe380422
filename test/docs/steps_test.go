package docs_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
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
	command command
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
func planSteps(blocks []block) []step {
	var steps []step
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		switch {
		case isYAML(b.lang):
			s := yamlStep(b)
			if next := i + 1; s.kind == applyStep && next < len(blocks) && blocks[next].adjoins &&
				showsOutput(blocks[next].lang) && isRefusal(blocks[next].text) {
				s.refusal = &shown{line: blocks[next].line, text: blocks[next].text}
				i = next
			}
			steps = append(steps, s)
		case isTranscript(b.lang) && strings.Contains("\n"+b.text, "\n$ "):
			for _, c := range parseTranscript(b.text, b.line+1) {
				if isRefusal(c.output) {
					steps = append(steps, step{kind: runStep, line: c.line, lang: b.lang, command: c})
				}
			}
		case showsOutput(b.lang) && isRefusal(b.text):
			steps = append(steps, step{kind: strayStep, line: b.line, lang: b.lang, text: b.text})
		}
	}
	return steps
}

// yamlStep parses a yaml block: an applyStep when any of its documents is an object.
func yamlStep(b block) step {
	s := step{kind: parseStep, line: b.line, lang: b.lang, docs: splitDocuments(b.text, b.line+1)}
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
