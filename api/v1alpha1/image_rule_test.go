package v1alpha1_test

import (
	"testing"

	"github.com/distribution/reference"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/appkeeper/appkeeper/config/crd"
)

// TestImageRuleIsTheReferenceGrammar keeps the admission rule on every kind's spec.image the
// grammar that the operator and the kubelet parse images with, so that an image the API server
// admits is one they can read.
func TestImageRuleIsTheReferenceGrammar(t *testing.T) {
	want := "self.matches(r'" + reference.ReferenceRegexp.String() + "')"
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"WebServer", "Memcached", "MySQL", "WordPress"} {
		checkImageRule(t, kind+" spec.image", imageSchema(t, crds, kind), want)
	}
	for _, kind := range []string{"WebServer", "Memcached", "MySQL"} {
		spec := specSchema(t, crds, kind)
		checkImageRule(t, kind+" spec.monitoring.image", spec.Properties["monitoring"].Properties["image"], want)
	}
}

func checkImageRule(t *testing.T, field string, image apiextensionsv1.JSONSchemaProps, want string) {
	t.Helper()
	if len(image.XValidations) != 1 || image.XValidations[0].Rule != want {
		t.Errorf("%s rules = %+v, want the one rule %s", field, image.XValidations, want)
	}
	// The API server estimates a rule's cost from the longest string it may see.
	if image.MaxLength == nil {
		t.Errorf("%s has no maxLength", field)
	}
}

func imageSchema(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition, kind string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	return specSchema(t, crds, kind).Properties["image"]
}

func specSchema(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition, kind string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for _, c := range crds {
		if c.Spec.Names.Kind == kind {
			return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		}
	}
	t.Fatalf("no CRD of kind %s", kind)
	return apiextensionsv1.JSONSchemaProps{}
}
