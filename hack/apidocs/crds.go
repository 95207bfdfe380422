package main

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/appkeeper/appkeeper/config/crd"
)

// kindOrder is the order of the page: the kinds that run an application, from the simplest, then
// the backups. A kind missing here still gets its section, after these, by name.
var kindOrder = []string{"WebServer", "Memcached", "PodSet", "MySQL", "WordPress", "MySQLBackup", "WordPressBackup"}

// kindDoc is what the page says of one kind.
type kindDoc struct {
	Kind, ListKind, Plural, Singular string
	APIVersion, Scope, Description   string
	ShortNames, Categories           []string
	Subresources, Rules              []string
	Columns                          []column
	Spec, Status                     []field
}

// column is one of the columns kubectl get prints.
type column struct {
	Name, JSONPath, Type, Shows string
	Wide                        bool
}

// loadCRDs returns every CRD controller-gen generated, in the order of the page. The CRDs are
// embedded when this program is built, which go run does after make manifests has written them.
func loadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := crd.Definitions()
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, errors.New("config/crd/bases holds no CRD: run make manifests")
	}
	for _, c := range crds {
		if c.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("config/crd/bases holds a %q named %s, not a CustomResourceDefinition", c.Kind, c.Name)
		}
	}
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return compareKinds(a.Spec.Names.Kind, b.Spec.Names.Kind)
	})
	return crds, nil
}

// compareKinds orders kinds as kindOrder does, and the kinds it does not list after it by name.
func compareKinds(a, b string) int {
	rank := func(kind string) int {
		if i := slices.Index(kindOrder, kind); i >= 0 {
			return i
		}
		return len(kindOrder)
	}
	if d := rank(a) - rank(b); d != 0 {
		return d
	}
	return strings.Compare(a, b)
}

// documentAll documents every CRD, reporting every field without a description at once.
func documentAll(crds []*apiextensionsv1.CustomResourceDefinition, scheme *runtime.Scheme, ref string) ([]kindDoc, error) {
	kinds := make([]kindDoc, 0, len(crds))
	var errs []error
	for _, crd := range crds {
		k, err := document(crd, scheme, ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		kinds = append(kinds, k)
	}
	return kinds, errors.Join(errs...)
}

// document reads one CRD's storage version and walks its schema beside the Go type of its kind.
func document(crd *apiextensionsv1.CustomResourceDefinition, scheme *runtime.Scheme, ref string) (kindDoc, error) {
	names := crd.Spec.Names
	version := storageVersion(crd)
	if version == nil || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		return kindDoc{}, fmt.Errorf("%s: the CRD has no storage version with a schema", names.Kind)
	}
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version.Name, Kind: names.Kind}
	goType, ok := scheme.AllKnownTypes()[gvk]
	if !ok {
		return kindDoc{}, fmt.Errorf("%s: no Go type of %s is registered in api/%s", names.Kind, gvk, version.Name)
	}
	root := version.Schema.OpenAPIV3Schema
	k := kindDoc{
		Kind: names.Kind, ListKind: names.ListKind, Plural: names.Plural, Singular: names.Singular,
		APIVersion:  gvk.GroupVersion().String(),
		Scope:       string(crd.Spec.Scope),
		Description: oneLine(root.Description),
		ShortNames:  names.ShortNames,
		Categories:  names.Categories,
	}
	for _, r := range root.XValidations {
		k.Rules = append(k.Rules, ruleText(r, ""))
	}
	var errs []error
	sections := []struct {
		name string
		into *[]field
	}{{"spec", &k.Spec}, {"status", &k.Status}}
	for _, s := range sections {
		fields, err := walkSection(root, goType, s.name, ref)
		*s.into = fields
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", names.Kind, err))
		}
	}
	k.Subresources = subresources(version.Subresources)
	columns, err := columns(version.AdditionalPrinterColumns, append(slices.Clone(k.Spec), k.Status...))
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", names.Kind, err))
	}
	k.Columns = columns
	return k, errors.Join(errs...)
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func subresources(s *apiextensionsv1.CustomResourceSubresources) []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Status != nil {
		out = append(out, code("status")+": the operator writes status through it, so a user's update of the object cannot change it")
	}
	if sc := s.Scale; sc != nil {
		text := code("scale") + ": " + code("kubectl scale") + " and autoscalers set " + code(sc.SpecReplicasPath) +
			" and read " + code(sc.StatusReplicasPath)
		if sc.LabelSelectorPath != nil {
			text += ", with the pods' label selector at " + code(*sc.LabelSelectorPath)
		}
		out = append(out, text)
	}
	return out
}

// conditionColumn is a column that prints a field of one condition.
var conditionColumn = regexp.MustCompile(`^\.status\.conditions\[\?\(@\.type=="([A-Za-z]+)"\)\]\.(status|reason|message)$`)

// columns says what each printer column shows: its own description when its marker gives one, else
// the description of the field it prints. A column that neither explains fails, as a field would.
func columns(cols []apiextensionsv1.CustomResourceColumnDefinition, fields []field) ([]column, error) {
	byPath := map[string]string{}
	for _, f := range fields {
		byPath[f.Path] = f.Description
	}
	out := make([]column, 0, len(cols))
	var errs []error
	for _, c := range cols {
		shows := oneLine(c.Description)
		if m := conditionColumn.FindStringSubmatch(c.JSONPath); shows == "" && m != nil {
			shows = fmt.Sprintf("The %s of the %s condition.", m[2], m[1])
		}
		if shows == "" && c.JSONPath == ".metadata.creationTimestamp" {
			shows = "How long ago the object was created."
		}
		if shows == "" {
			shows = firstSentence(byPath[strings.TrimPrefix(c.JSONPath, ".")])
		}
		if shows == "" {
			errs = append(errs, fmt.Errorf("printer column %s (%s) says nothing of what it shows: give its printcolumn marker a description", c.Name, c.JSONPath))
		}
		out = append(out, column{Name: c.Name, JSONPath: c.JSONPath, Type: c.Type, Shows: shows, Wide: c.Priority > 0})
	}
	return out, errors.Join(errs...)
}

// firstSentence is the first sentence of a description, which says what the field is.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// kubeReference is the Kubernetes API reference of the release whose API this module builds
// against, so that a bump of k8s.io/api moves the links with it.
func kubeReference() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("the binary carries no module information to tell the Kubernetes release")
	}
	for _, dep := range info.Deps {
		if dep.Path != "k8s.io/api" {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		// k8s.io/api v0.X.Y is the API of Kubernetes v1.X.
		parts := strings.SplitN(strings.TrimPrefix(dep.Version, "v0."), ".", 2)
		if len(parts) != 2 || !strings.HasPrefix(dep.Version, "v0.") {
			return "", fmt.Errorf("k8s.io/api %s names no Kubernetes release", dep.Version)
		}
		return "https://kubernetes.io/docs/reference/generated/kubernetes-api/v1." + parts[0] + "/", nil
	}
	return "", errors.New("the binary does not depend on k8s.io/api")
}
