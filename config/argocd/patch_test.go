package argocd_test

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/config/argocd"
	"github.com/appkeeper/appkeeper/config/crd"
)

// The patch people apply to argocd-cm must give every kind the script the tests judge.
func TestArgoCDPatchHoldsTheScriptForEveryKind(t *testing.T) {
	data, err := os.ReadFile("argocd-cm-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	patch := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, patch); err != nil {
		t.Fatal(err)
	}
	if patch.Kind != "ConfigMap" || patch.Name != "argocd-cm" || patch.Namespace != "" {
		t.Errorf("patch targets %s %s/%s, want the ConfigMap argocd-cm in any namespace", patch.Kind, patch.Namespace, patch.Name)
	}
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range crds {
		key := argocd.Key(d.Spec.Group, d.Spec.Names.Kind)
		if script, ok := patch.Data[key]; !ok {
			t.Errorf("the patch has no %s", key)
		} else if script != argocd.Script {
			t.Errorf("%s differs from health.lua: run make sync-manifests", key)
		}
	}
	if len(patch.Data) != len(crds) {
		t.Errorf("the patch has %d keys for %d kinds", len(patch.Data), len(crds))
	}
}
