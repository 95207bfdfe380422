package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/config/argocd"
)

const argoCDPatch = "config/argocd/argocd-cm-patch.yaml"

// argoCDUsage tells, at the top of the patch, how it is applied: Argo CD's own install owns
// argocd-cm, so appkeeper ships a patch to it rather than the ConfigMap.
const argoCDUsage = `# Argo CD's health check for every appkeeper kind (config/argocd/health.lua), as a patch to the
# argocd-cm ConfigMap of Argo CD's own install. Apply it with
#   kubectl -n argocd patch configmap argocd-cm --patch-file config/argocd/argocd-cm-patch.yaml
# or list it under "patches:" in the kustomization that installs Argo CD.
`

// writeArgoCDPatch writes the argocd-cm patch that gives each kind of crds the health check.
func writeArgoCDPatch(crds []string) error {
	data := map[string]string{}
	for _, path := range crds {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd, err := decodeOne(raw, "CustomResourceDefinition")
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		if group == "" || kind == "" {
			return fmt.Errorf("%s names no group or kind", path)
		}
		data[argocd.Key(group, kind)] = argocd.Script
	}
	// One key per kind rather than one wildcard key, which older Argo CD releases do not read.
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "argocd-cm"},
		"data":       data,
	})
	if err != nil {
		return err
	}
	return write(argoCDPatch, header+argoCDUsage+string(out))
}
