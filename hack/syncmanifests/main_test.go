package main

import (
	"strings"
	"testing"
)

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.21.0
  name: things.example.dev
spec:
  group: example.dev
`

func TestChartCRD(t *testing.T) {
	got, err := chartCRD([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	want := header + `{{- if .Values.crds.create }}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.21.0
    {{- if .Values.crds.keep }}
    helm.sh/resource-policy: keep
    argocd.argoproj.io/sync-options: Delete=false,Prune=false
    {{- end }}
  name: things.example.dev
spec:
  group: example.dev
{{- end }}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestChartCRDRefuses(t *testing.T) {
	for name, data := range map[string]string{
		"a template":   strings.Replace(crd, "example.dev\n", "'{{ .Values.group }}'\n", 1),
		"another kind": strings.Replace(crd, "kind: CustomResourceDefinition", "kind: ConfigMap", 1),
		"two objects":  crd + "---\n" + crd,
	} {
		if _, err := chartCRD([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
