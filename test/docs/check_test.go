package docs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
)

// parsedOnly holds the apiVersions whose objects a page may show but no API server serves here;
// their documents are parsed, not applied. Any other kind the API server does not serve fails
// the page, so that a misspelt apiVersion or kind is caught rather than skipped.
var parsedOnly = map[string]string{
	// kustomize reads its Kustomization and Component on the client: no API server serves them.
	"kustomize.config.k8s.io/v1beta1":  "kustomize",
	"kustomize.config.k8s.io/v1alpha1": "kustomize",
	// Argo CD's and Flux's objects configure those tools, not appkeeper: installing their CRDs
	// here would check the pages against a copy of another project's schema.
	"argoproj.io/v1alpha1":              "Argo CD",
	"source.toolkit.fluxcd.io/v1":       "Flux",
	"kustomize.toolkit.fluxcd.io/v1":    "Flux",
	"helm.toolkit.fluxcd.io/v2":         "Flux",
	"notification.toolkit.fluxcd.io/v1": "Flux",
}

// commandTimeout bounds one kubectl or transcript command: a command that waits (`kubectl get
// -w`, `kubectl wait`) fails its step instead of stalling the whole run.
const commandTimeout = 2 * time.Minute

// problem is a check that failed, at a line of the page.
type problem struct {
	line    int
	message string
}

// pageRun checks a page's steps in the page's namespace, as the page's reader would run them.
type pageRun struct {
	namespace string
	env       []string // KUBECONFIG of the page's namespace, the control plane's kubectl first on PATH
}

// check runs a step and returns what the page gets wrong in it.
func (p *pageRun) check(ctx context.Context, s step) []problem {
	switch s.kind {
	case applyStep:
		return p.apply(ctx, s)
	case parseStep:
		return parseProblems(s)
	case runStep:
		return p.run(ctx, s.command)
	default:
		return []problem{{s.line, "this block shows the API server refusing something, but no example " +
			"on the page produces it, so it is not checked. Put it right after the ```yaml block it " +
			"refuses (only blank lines between), or show the command that gets it on a `$ ` line " +
			"of a ```console block:\n" + indent(s.text)}}
	}
}

func parseProblems(s step) []problem {
	var problems []problem
	for _, d := range s.docs {
		if d.err != nil {
			problems = append(problems, problem{d.line, "the YAML does not parse: " + d.err.Error()})
		}
	}
	return problems
}

// served splits an example's documents into those to apply and the problems of the others: a
// document that does not parse, is not an object, or is of a kind nobody serves.
func (p *pageRun) served(s step) ([]document, []problem) {
	problems := parseProblems(s)
	var apply []document
	for _, d := range s.docs {
		switch {
		case d.err != nil:
		case !d.object():
			problems = append(problems, problem{d.line, "this document has no apiVersion and kind, " +
				"but others of its block do: a block is either example objects or a fragment"})
		case parsedOnly[d.apiVersion] != "":
		default:
			if pr := unserved(d); pr != nil {
				problems = append(problems, *pr)
			} else {
				apply = append(apply, d)
			}
		}
	}
	return apply, problems
}

// unserved is the problem of an object whose kind the API server does not serve.
func unserved(d document) *problem {
	gvk := schema.FromAPIVersionAndKind(d.apiVersion, d.kind)
	_, err := apiServer.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return &problem{d.line, fmt.Sprintf("the API server does not serve kind %s of apiVersion %s: "+
			"fix the kind or apiVersion, or, if the page shows another tool's object, add its "+
			"apiVersion to parsedOnly in test/docs/check_test.go", d.kind, d.apiVersion)}
	case err != nil:
		return &problem{d.line, fmt.Sprintf("look up kind %s of apiVersion %s: %v", d.kind, d.apiVersion, err)}
	}
	return nil
}

// apply applies a yaml block's objects as the page's reader would, and compares what the API
// server answers with what the page shows.
func (p *pageRun) apply(ctx context.Context, s step) []problem {
	docs, problems := p.served(s)
	if len(problems) > 0 || len(docs) == 0 {
		return problems
	}
	if err := p.createNamespaces(ctx, docs); err != nil {
		return []problem{{s.line, err.Error()}}
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.text
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, apiServer.kubectl, "apply", "--server-side", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(texts, "\n---\n"))
	cmd.Env, cmd.Dir, cmd.WaitDelay = p.env, apiServer.root, 5*time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return []problem{{s.line, fmt.Sprintf("kubectl apply did not end within %v:\n%s", commandTimeout, indent(string(out)))}}
	}
	return p.judgeApply(s, string(out), err)
}

// judgeApply compares kubectl's answer to an example with the page's.
func (p *pageRun) judgeApply(s step, out string, err error) []problem {
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return []problem{{s.line, fmt.Sprintf("run kubectl apply: %v\n%s", err, indent(out))}}
	}
	switch {
	case s.refusal == nil && err != nil:
		return []problem{{s.line, fmt.Sprintf("the API server refused this example (kubectl apply "+
			"--server-side -f - in namespace %s, %v):\n%s\nFix the example, or, if the refusal is the "+
			"point, show it in a ```console or ```text block right after this one.%s",
			p.namespace, err, indent(out), p.hint(out))}}
	case s.refusal == nil:
		return nil
	case err == nil:
		return []problem{{s.line, fmt.Sprintf("the page shows the API server refusing this example "+
			"(the block at line %d):\n%s\nbut it accepted it (kubectl apply --server-side -f - in "+
			"namespace %s):\n%s", s.refusal.line, indent(s.refusal.text), p.namespace, indent(out))}}
	case comparable(out) != comparable(s.refusal.text):
		return []problem{{s.line, fmt.Sprintf("the API server refused this example, but not as the "+
			"block at line %d shows.\n%s", s.refusal.line, p.difference(s.refusal.text, out))}}
	}
	return nil
}

// run runs a transcript's refusal as the page's reader would type it and compares the outputs.
func (p *pageRun) run(ctx context.Context, c doctest.Command) []problem {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", c.Command)
	cmd.Env, cmd.Dir, cmd.WaitDelay = p.env, apiServer.root, 5*time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return []problem{{c.Line, fmt.Sprintf("this command did not end within %v, where the API server "+
			"refuses at once:\n%s\n%s", commandTimeout, shell(c), indent(string(out)))}}
	case err != nil && !errors.As(err, &exit):
		return []problem{{c.Line, fmt.Sprintf("run this command with bash: %v\n%s\n%s", err, shell(c), indent(string(out)))}}
	case comparable(string(out)) != comparable(output(c)):
		return []problem{{c.Line, fmt.Sprintf("this command does not print what the page shows (run "+
			"with bash in namespace %s):\n%s\n%s", p.namespace, shell(c), p.difference(output(c), string(out)))}}
	case err == nil:
		return []problem{{c.Line, fmt.Sprintf("this command prints what the page shows, but succeeds: "+
			"a refusal must exit non-zero, as kubectl does when the API server refuses:\n%s", shell(c))}}
	}
	return nil
}

// lastAppliedWarning is what client-side `kubectl apply` prints when it patches an object that
// holds no last-applied-configuration annotation.
var lastAppliedWarning = regexp.MustCompile(`(?m)^Warning: resource \S+ is missing the kubectl\.kubernetes\.io/last-applied-configuration annotation.*$`)

// comparable is output as compared: words joined by single spaces, less the warning that a
// transcript's client-side `kubectl apply` prints on an object the test made from a yaml block
// with --server-side. A reader who applied that block with plain `kubectl apply` gets no warning,
// so the page does not show it.
func comparable(output string) string {
	return collapse(lastAppliedWarning.ReplaceAllString(output, ""))
}

// difference shows both texts whole, since a writer copies kubectl's into the page, and the first
// word where they part, since in a long refusal one changed word is hard to spot.
func (p *pageRun) difference(want, got string) string {
	w, g := strings.Fields(want), strings.Fields(got)
	at := 0
	for at < len(w) && at < len(g) && w[at] == g[at] {
		at++
	}
	return fmt.Sprintf("The page shows:\n%s\nkubectl printed:\n%s\nThey part at word %d: the page has %q, "+
		"kubectl printed %q.%s", indent(want), indent(got), at+1, excerpt(w[at:]), excerpt(g[at:]), p.hint(got))
}

// hint explains the one refusal a page cannot fix by copying kubectl's output: an object the
// command expects that the page never made.
func (p *pageRun) hint(out string) string {
	if !strings.Contains(out, "NotFound") {
		return ""
	}
	return fmt.Sprintf("\nNamespace %s holds only what this page's ```yaml blocks above applied: "+
		"create what the command needs in a ```yaml block before it.", p.namespace)
}

// shell is a command as the page shows it.
func shell(c doctest.Command) string {
	return indent("$ " + c.Command)
}

func excerpt(words []string) string {
	if len(words) > 8 {
		return strings.Join(words[:8], " ") + " …"
	}
	if len(words) == 0 {
		return "(nothing more)"
	}
	return strings.Join(words, " ")
}

func indent(text string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(text, "\n", "\n    ")
}

// createNamespaces makes the namespaces that objects name, as a reader applying them would have.
func (p *pageRun) createNamespaces(ctx context.Context, docs []document) error {
	for _, d := range docs {
		if d.namespace == "" || d.namespace == p.namespace {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.namespace}}
		if err := apiServer.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s, which the example names: %w", d.namespace, err)
		}
	}
	return nil
}

// environment is the process environment of the page's commands: its kubeconfig, the control
// plane's kubectl before any other, and kubectl's discovery cache kept out of the user's home.
func environment(kubeconfig string) []string {
	env := []string{
		"KUBECONFIG=" + kubeconfig,
		"PATH=" + apiServer.controlPlane + string(os.PathListSeparator) + os.Getenv("PATH"),
		"KUBECACHEDIR=" + apiServer.cacheDir,
	}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "KUBECONFIG", "PATH", "KUBECACHEDIR":
		default:
			env = append(env, kv)
		}
	}
	return env
}
