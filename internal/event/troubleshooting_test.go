package event

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The troubleshooting page of the book and the code whose reasons it explains, from this package.
const (
	troubleshootingPage = "../../docs/troubleshooting.md"
	docsDir             = "../../docs"
	apiDir              = "../../api/v1alpha1"
	internalDir         = "../../internal"
	catalogFile         = "event.go"
	apiImportPath       = "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The sections of the page that hold the reference tables, and the column each table names a
// reason in.
const (
	conditionSection = "Condition reasons"
	eventSection     = "Events"
	triggerSection   = "Backup triggers"
	reasonColumn     = "Reason"
	typeColumn       = "Type"
)

// TestTroubleshootingPageListsEveryReason keeps docs/troubleshooting.md complete and current. The
// reasons are read from the source, not from a list kept by hand, so that a reason added anywhere
// fails this test until the page explains it:
//
//   - condition reasons: every reason constant of api/v1alpha1 that the operator's code under
//     internal/ refers to, and every constant or literal it writes into a Reason field;
//   - Event reasons: every Event of this package's catalog, with its type, and every Event
//     constant of api/v1alpha1;
//   - backup triggers: every BackupReason constant of api/v1alpha1.
//
// Every Reason and Event constant of api/v1alpha1 must be on the page, in the table of condition
// reasons or of Events; and every reason the page's tables name must still exist.
func TestTroubleshootingPageListsEveryReason(t *testing.T) {
	api := apiConstants(t)
	conditionReasons := conditionReasonsInCode(t, api)
	catalog := parseCatalog(t, api)
	page := readPage(t)

	conditionRows := tableRows(t, page, conditionSection, reasonColumn)
	eventRows := tableRows(t, page, eventSection, reasonColumn)
	triggerRows := tableRows(t, page, triggerSection, reasonColumn)
	if len(conditionRows) == 0 || len(eventRows) == 0 || len(triggerRows) == 0 {
		t.Fatalf("%s: want tables under the headings %q, %q and %q with a column %q",
			troubleshootingPage, conditionSection, eventSection, triggerSection, reasonColumn)
	}
	for reason, rows := range conditionRows {
		if len(rows) > 1 {
			t.Errorf("%s: %q has %d rows under %q: one row per reason", troubleshootingPage, reason, len(rows), conditionSection)
		}
	}

	declared := map[string]bool{}
	eventReasons := map[string]bool{}
	triggers := map[string]bool{}
	for name, value := range api {
		switch {
		case strings.HasPrefix(name, "BackupReason"):
			triggers[value] = true
		case strings.HasPrefix(name, "Reason"):
			declared[value] = true
		case strings.HasPrefix(name, "Event"):
			declared[value] = true
			eventReasons[value] = true
		}
	}
	for _, e := range catalog {
		eventReasons[e.Reason] = true
	}

	for _, reason := range sortedKeys(conditionReasons) {
		if conditionRows[reason] == nil {
			t.Errorf("the condition reason %q is set in code but not in the table under %q of %s", reason, conditionSection, troubleshootingPage)
		}
	}
	for _, reason := range sortedKeys(declared) {
		if conditionRows[reason] == nil && eventRows[reason] == nil {
			t.Errorf("the reason %q of api/v1alpha1 is in no table of %s", reason, troubleshootingPage)
		}
	}
	for _, reason := range sortedKeys(eventReasons) {
		if eventRows[reason] == nil {
			t.Errorf("the Event reason %q is not in the table under %q of %s", reason, eventSection, troubleshootingPage)
		}
	}
	for _, reason := range sortedKeys(triggers) {
		if triggerRows[reason] == nil {
			t.Errorf("the backup trigger %q is not in the table under %q of %s", reason, triggerSection, troubleshootingPage)
		}
	}
	requireEventTypes(t, catalog, eventRows)

	for reason := range conditionRows {
		if !conditionReasons[reason] && !declared[reason] {
			t.Errorf("%s lists the condition reason %q, which the code no longer has", troubleshootingPage, reason)
		}
	}
	for reason := range eventRows {
		if !eventReasons[reason] {
			t.Errorf("%s lists the Event reason %q, which the catalog no longer has", troubleshootingPage, reason)
		}
	}
	for reason := range triggerRows {
		if !triggers[reason] {
			t.Errorf("%s lists the backup trigger %q, which api/v1alpha1 no longer has", troubleshootingPage, reason)
		}
	}
}

// TestTroubleshootingCatalogIsReadRight checks the parse of the catalog against the catalog itself,
// for a few of its Events, so that a change of how event.go is written cannot leave the page's
// test reading nothing.
func TestTroubleshootingCatalogIsReadRight(t *testing.T) {
	catalog := parseCatalog(t, apiConstants(t))
	for name, want := range map[string]Event{
		"Created": Created, "ReplacedFailed": ReplacedFailed, "RolledBack": RolledBack,
		"RestoreStuck": RestoreStuck, "VerificationFailed": VerificationFailed,
	} {
		if got, ok := catalog[name]; !ok || got != want {
			t.Errorf("parsed %s = %+v, want %+v", name, got, want)
		}
	}
}

// TestTroubleshootingLinksToRunbooksThatExist keeps the page's links to the runbooks working.
func TestTroubleshootingLinksToRunbooksThatExist(t *testing.T) {
	links := regexp.MustCompile(`\]\((runbooks/[^)#\s]+)`).FindAllStringSubmatch(readPage(t), -1)
	if len(links) == 0 {
		t.Fatalf("%s links to no runbook", troubleshootingPage)
	}
	for _, link := range links {
		if _, err := os.Stat(filepath.Join(docsDir, link[1])); err != nil {
			t.Errorf("%s links to %s: %v", troubleshootingPage, link[1], err)
		}
	}
}

// requireEventTypes checks that each Event of the catalog has a row of its reason whose type
// column names its type: Replaced is both Normal and Warning.
func requireEventTypes(t *testing.T, catalog map[string]Event, rows map[string][]map[string]string) {
	t.Helper()
	for _, name := range sortedKeys(catalog) {
		e := catalog[name]
		found := slices.ContainsFunc(rows[e.Reason], func(row map[string]string) bool {
			return strings.Contains(row[typeColumn], e.Type)
		})
		if !found {
			t.Errorf("%s: no row under %q gives the Event %s (reason %q) its type %s", troubleshootingPage, eventSection, name, e.Reason, e.Type)
		}
	}
}

func readPage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(troubleshootingPage)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// apiConstants are the string constants of api/v1alpha1, by name, untyped or typed (a
// BackupPhase), with those defined as another constant resolved.
func apiConstants(t *testing.T) map[string]string {
	t.Helper()
	exprs := map[string]ast.Expr{}
	for _, file := range parseDir(t, apiDir) {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						exprs[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	values := map[string]string{}
	var resolve func(ast.Expr) (string, bool)
	resolve = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			return stringLiteral(e)
		case *ast.Ident:
			if other, ok := exprs[e.Name]; ok {
				return resolve(other)
			}
		}
		return "", false
	}
	for name, e := range exprs {
		if v, ok := resolve(e); ok {
			values[name] = v
		}
	}
	if len(values) == 0 {
		t.Fatalf("no string constants in %s", apiDir)
	}
	return values
}

// conditionReasonsInCode are the reasons code under internal/ can put on a condition: the reason
// constants of api/v1alpha1 it refers to, and what it writes into a Reason field (a composite
// literal's Reason: or an assignment to x.Reason) when that is a literal, an api/v1alpha1
// constant or its conversion (string(BackupPending)). The Event catalog is read separately, the
// kubectl plugin only reads reasons, and the local cluster plays the kubelet's part, not the
// operator's.
func conditionReasonsInCode(t *testing.T, api map[string]string) map[string]bool {
	t.Helper()
	reasons := map[string]bool{}
	err := filepath.WalkDir(internalDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "event" || name == "kubectlplugin" || name == "localcluster" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		collectReasons(file, api, reasons)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) == 0 {
		t.Fatalf("no condition reasons found under %s", internalDir)
	}
	return reasons
}

// collectReasons adds to reasons what file refers to or writes as a condition reason.
func collectReasons(file *ast.File, api map[string]string, reasons map[string]bool) {
	alias := importName(file, apiImportPath)
	value := func(e ast.Expr) (string, bool) { return constantValue(e, alias, api) }
	add := func(e ast.Expr) {
		if v, ok := value(e); ok {
			reasons[v] = true
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && alias != "" && x.Name == alias && strings.HasPrefix(n.Sel.Name, "Reason") {
				add(n)
			}
		case *ast.KeyValueExpr:
			if key, ok := n.Key.(*ast.Ident); ok && key.Name == "Reason" {
				add(n.Value)
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				return true
			}
			for i, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" {
					add(n.Rhs[i])
				}
			}
		}
		return true
	})
}

// constantValue is the string e stands for, when it is a string literal, a constant of
// api/v1alpha1 (imported as alias) or string() of one.
func constantValue(e ast.Expr, alias string, api map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return stringLiteral(e)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && alias != "" && x.Name == alias {
			v, ok := api[e.Sel.Name]
			return v, ok
		}
	case *ast.CallExpr:
		if fun, ok := e.Fun.(*ast.Ident); ok && fun.Name == "string" && len(e.Args) == 1 {
			return constantValue(e.Args[0], alias, api)
		}
	}
	return "", false
}

// parseCatalog reads the Events of the catalog from event.go: each package variable set to an
// Event literal, by name, with its type, reason and action.
func parseCatalog(t *testing.T, api map[string]string) map[string]Event {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), catalogFile, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	alias := importName(file, apiImportPath)
	types := map[string]string{"EventTypeNormal": corev1.EventTypeNormal, "EventTypeWarning": corev1.EventTypeWarning}
	catalog := map[string]Event{}
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := valueAt(vs, i).(*ast.CompositeLit)
				if !ok || !isIdent(lit.Type, "Event") {
					continue
				}
				var e Event
				for _, elt := range lit.Elts {
					kv := elt.(*ast.KeyValueExpr)
					switch key := kv.Key.(*ast.Ident).Name; key {
					case "Type":
						if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
							e.Type = types[sel.Sel.Name]
						}
					case "Reason":
						e.Reason, _ = constantValue(kv.Value, alias, api)
					case "Action":
						e.Action, _ = constantValue(kv.Value, alias, api)
					}
				}
				if e.Type == "" || e.Reason == "" {
					t.Fatalf("%s: cannot read the type and reason of %s", catalogFile, name.Name)
				}
				catalog[name.Name] = e
			}
		}
	}
	if len(catalog) == 0 {
		t.Fatalf("no Event in %s", catalogFile)
	}
	return catalog
}

// tableRows reads the tables under the level-2 heading section of page, down to the next level-2
// heading. A row whose cell in column is one code span is filed under the text of that span, as
// a map from its table's column names to its cells; other rows (a reason told in words) are left
// out.
func tableRows(t *testing.T, page, section, column string) map[string][]map[string]string {
	t.Helper()
	rows := map[string][]map[string]string{}
	var header []string
	in := false
	for line := range strings.SplitSeq(page, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == section
			header = nil
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			header = nil
			continue
		}
		cells := splitRow(line)
		switch {
		case header == nil:
			header = cells
			continue
		case isSeparator(cells):
			continue
		}
		row := map[string]string{}
		for i, cell := range cells {
			if i < len(header) {
				row[header[i]] = cell
			}
		}
		if reason, ok := codeSpan(row[column]); ok {
			rows[reason] = append(rows[reason], row)
		}
	}
	return rows
}

func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// codeSpan is the text of cell when the cell is one code span and nothing else.
func codeSpan(cell string) (string, bool) {
	inner, ok := strings.CutPrefix(cell, "`")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "`")
	if !ok || inner == "" || strings.Contains(inner, "`") {
		return "", false
	}
	return inner, true
}

// importName is the name file imports path under, or empty.
func importName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	return files
}

func stringLiteral(lit *ast.BasicLit) (string, bool) {
	if lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
