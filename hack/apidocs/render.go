package main

import (
	"fmt"
	"strings"
)

const intro = `# API reference

This page is generated from the CustomResourceDefinitions in ` + "`config/crd/bases`" + ` by
` + "`make api-docs`" + ` (` + "`go run ./hack/apidocs`" + `) and must not be edited by hand: a
field's description is the doc comment of its Go field in ` + "`api/v1alpha1`" + `, and its type,
default and checks come from that field's markers, so a change starts there and ends with
` + "`make api-docs`" + `, which regenerates the CRDs first. Each kind lists its fields by their full path, with what the
API server checks of them: bounds, enums, patterns, immutability, and the CEL rules with the
message a refused value gets. A required field must be set whenever the object that holds it is.
A field whose type is Kubernetes' own, such as a pod spec or resource requirements, links to the
Kubernetes API reference instead of listing its fields.
`

// render writes the page.
func render(kinds []kindDoc) string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n| Kind | Short names | What it is |\n|---|---|---|\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", k.Kind, anchor(k.Kind), codes(k.ShortNames), escape(firstSentence(k.Description)))
	}
	for _, k := range kinds {
		renderKind(&b, k)
	}
	return b.String()
}

// anchor is the id of a kind's heading: the kind in lowercase, so that links such as
// reference/api.md#mysql keep working whatever the heading's text becomes.
func anchor(kind string) string { return strings.ToLower(kind) }

func renderKind(b *strings.Builder, k kindDoc) {
	id := anchor(k.Kind)
	fmt.Fprintf(b, "\n## %s {#%s}\n\n%s\n\n", k.Kind, id, escape(k.Description))
	fmt.Fprintf(b, "- **API version:** %s, kind %s\n", code(k.APIVersion), code(k.Kind))
	fmt.Fprintf(b, "- **Scope:** %s\n", k.Scope)
	fmt.Fprintf(b, "- **Resource:** %s (singular %s, list kind %s)\n", code(k.Plural), code(k.Singular), code(k.ListKind))
	fmt.Fprintf(b, "- **Short names:** %s\n", or(codes(k.ShortNames), "none"))
	fmt.Fprintf(b, "- **Categories:** %s\n", or(codes(k.Categories), "none"))
	fmt.Fprintf(b, "- **Subresources:** %s\n", or(strings.Join(k.Subresources, "; "), "none"))
	if len(k.Rules) > 0 {
		b.WriteString("- **Rules on the whole object:**\n")
		for _, r := range k.Rules {
			fmt.Fprintf(b, "    - %s\n", r)
		}
	}

	fmt.Fprintf(b, "\n### Printer columns {#%s-columns}\n\n", id)
	b.WriteString("The columns of `kubectl get`; those marked wide show with `-o wide`.\n\n")
	b.WriteString("| Column | JSONPath | Type | Shown | What it shows |\n|---|---|---|---|---|\n")
	for _, c := range k.Columns {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", escape(c.Name), code(c.JSONPath), c.Type, pick(c.Wide, "wide", "always"), escape(c.Shows))
	}
	renderFields(b, "Spec", id+"-spec", k.Spec)
	renderFields(b, "Status", id+"-status", k.Status)
}

func renderFields(b *strings.Builder, title, id string, fields []field) {
	if len(fields) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### %s {#%s}\n\n", title, id)
	b.WriteString("| Field | Type | Default | Required | Checks | Description |\n|---|---|---|---|---|---|\n")
	for _, f := range fields {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n",
			code(f.Path), f.Type, f.Default, pick(f.Required, "yes", ""), strings.Join(f.Checks, "<br>"), escape(f.Description))
	}
}

func codes(values []string) string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, code(v))
	}
	return strings.Join(out, ", ")
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// oneLine joins a description's lines: a table cell is one line of Markdown.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// markdownEscaper keeps text from being read as Markdown or HTML: descriptions speak of <name>,
// of globs and of cron's "* * *", and a | would end a table cell.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `|`, `\|`, `<`, `&lt;`, `>`, `&gt;`,
)

func escape(s string) string { return markdownEscaper.Replace(s) }

// code is s as a code span, whatever backticks it holds. A | inside stays as it is: the tables of
// Python-Markdown, which mkdocs renders, do not split a cell inside a code span, and would show a
// backslash there.
func code(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
