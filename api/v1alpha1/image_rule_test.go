package v1alpha1_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/distribution/reference"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/appkeeper/appkeeper/config/crd"
)

// imagePathRule bounds an image's path, its name less the registry, as ParseNormalizedNamed reads
// it: n is the name, d whether its first component is a registry, and p the path, which a name of
// one component on Docker Hub has as library/<name>.
func imagePathRule(limit int) string {
	return "[self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, " +
		"[d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + " +
		"(!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= " + strconv.Itoa(limit) + ")))"
}

// TestImageRuleIsTheReferenceGrammar keeps the admission rule on every kind's spec.image the
// grammar that the operator and the kubelet parse images with, and their limit on the path's
// length, so that an image the API server admits is one they can read.
func TestImageRuleIsTheReferenceGrammar(t *testing.T) {
	want := "self.matches(r'" + reference.ReferenceRegexp.String() + "') && " + imagePathRule(reference.RepositoryNameTotalLengthMax)
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
	} else if limit := "its path at most " + strconv.Itoa(reference.RepositoryNameTotalLengthMax) + " characters"; !strings.Contains(image.XValidations[0].Message, limit) {
		t.Errorf("%s rule message %q does not say %q", field, image.XValidations[0].Message, limit)
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
