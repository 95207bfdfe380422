// Command apidocs writes the book's API reference, docs/reference/api.md, from the CRDs that
// controller-gen generates into config/crd/bases and from the Go types of api/v1alpha1.
//
// The CRDs' schemas are what the API server enforces, so every type, default, bound and rule on
// the page is read from them. The Go types, walked by reflection beside the schemas, tell where a
// field's type belongs to Kubernetes rather than to appkeeper: such a field links to the
// Kubernetes API reference instead of listing the thousands of fields of a pod spec. A field of
// appkeeper's own types without a description fails the command, so that a new field cannot reach
// users undocumented; "make check-generate" runs it, so the page cannot go stale.
//
//	go run ./hack/apidocs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/appkeeper/appkeeper/api/v1alpha1"
)

func main() {
	out := flag.String("o", "docs/reference/api.md", "the page to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "api-docs:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	crds, err := loadCRDs()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	ref, err := kubeReference()
	if err != nil {
		return err
	}
	kinds, err := documentAll(crds, scheme, ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(render(kinds)), 0o644); err != nil {
		return err
	}
	counts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		counts = append(counts, fmt.Sprintf("%s %d+%d", k.Kind, len(k.Spec), len(k.Status)))
	}
	fmt.Printf("api-docs: wrote %s; spec+status fields: %s\n", out, strings.Join(counts, ", "))
	return nil
}
