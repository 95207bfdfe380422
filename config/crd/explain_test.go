package crd_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/appkeeper/appkeeper/config/crd"
)

// kubectl explain prints a field's description and enum, never its schema's default, minimum or
// maximum: a user reads those only when the description says them.
func TestDescriptionsStateDefaultsAndRanges(t *testing.T) {
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			walkSchema(v.Schema.OpenAPIV3Schema, c.Spec.Names.Kind, func(path string, s *apiextensionsv1.JSONSchemaProps) {
				for _, problem := range unstated(s) {
					missing = append(missing, path+": "+problem)
				}
			})
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d fields do not say in their description what their schema holds:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// Descriptions are for users: they speak of the API, not of the Go code behind it.
func TestDescriptionsDoNotSpeakOfGo(t *testing.T) {
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	goWords := regexp.MustCompile(`\b(nil|struct|pointer|slice|DeepCopy|json tag|omitempty|func|Go)\b`)
	var found []string
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			walkSchema(v.Schema.OpenAPIV3Schema, c.Spec.Names.Kind, func(path string, s *apiextensionsv1.JSONSchemaProps) {
				if w := goWords.FindString(s.Description); w != "" {
					found = append(found, fmt.Sprintf("%s: %q", path, w))
				}
			})
		}
	}
	sort.Strings(found)
	if len(found) > 0 {
		t.Errorf("descriptions that speak of Go:\n%s", strings.Join(found, "\n"))
	}
}

// kubernetesTypes are the fields whose schema is a Kubernetes type, documented by Kubernetes.
var kubernetesTypes = map[string]bool{
	"template": true, "affinity": true, "tolerations": true, "securityContext": true,
	"podSecurityContext": true, "resources": true, "conditions": true,
}

// walkSchema visits s and every field below it that appkeeper documents.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, path string, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(path, s)
	for name, p := range s.Properties {
		if !kubernetesTypes[name] {
			walkSchema(&p, path+"."+name, visit)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		items := *s.Items.Schema
		if items.Description == "" {
			// kubectl explain shows a list's description for its items too.
			items.Description = s.Description
		}
		walkSchema(&items, path+"[]", visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(s.AdditionalProperties.Schema, path+"{}", visit)
	}
}

// unstated lists what s's schema holds that its description does not say: the default (the words
// "Defaults to" and the value, unless the default is an empty object, which only lets the nested
// defaults apply) and the bounds.
func unstated(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if s.Default != nil && string(s.Default.Raw) != "{}" && !statesDefault(s.Description, s.Default.Raw) {
		out = append(out, "default "+string(s.Default.Raw))
	}
	for _, bound := range []struct {
		name  string
		value *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		if bound.value != nil && !saysNumber(s.Description, fmt.Sprint(*bound.value)) {
			out = append(out, fmt.Sprintf("%s %v", bound.name, *bound.value))
		}
	}
	for _, length := range []struct {
		name  string
		value *int64
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		// A minimum length of one only refuses an empty value, which the API server's message says.
		if length.value != nil && *length.value != 1 && !saysNumber(s.Description, fmt.Sprint(*length.value)) {
			out = append(out, fmt.Sprintf("%s %d", length.name, *length.value))
		}
	}
	return out
}

// statesDefault tells whether description says "Defaults to" and, for a default that is a value or
// a list of values, each value.
func statesDefault(description string, raw []byte) bool {
	if !strings.Contains(description, "Defaults to") {
		return false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	values := []any{v}
	switch v := v.(type) {
	case map[string]any:
		return true
	case []any:
		values = v
	}
	for _, value := range values {
		if !strings.Contains(description, fmt.Sprint(value)) {
			return false
		}
	}
	return true
}

// saysNumber tells whether description holds number as a word of its own, not inside another.
func saysNumber(description, number string) bool {
	return regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(number) + `($|[^0-9])`).MatchString(description)
}
