package testcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// PrometheusOperatorModule is the prometheus-operator release whose CRDs the tests install: the
// Go module proxy serves its sources, CRDs included, so no cluster or registry is needed.
const PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

var prometheusOperatorDir = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", PrometheusOperatorModule).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w (the tests need the Go module proxy, or the module in the module cache)", PrometheusOperatorModule, err)
	}
	var module struct{ Dir, Error string }
	if err := json.Unmarshal(out, &module); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", PrometheusOperatorModule, err)
	}
	if module.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", PrometheusOperatorModule, module.Error)
	}
	return module.Dir, nil
})

// PrometheusOperatorCRD is prometheus-operator's CRD of the plural resource given (podmonitors,
// servicemonitors, prometheusrules), as the release ships it.
func PrometheusOperatorCRD(plural string) (*apiextensionsv1.CustomResourceDefinition, error) {
	path, err := PrometheusOperatorCRDFile(plural)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return crd, nil
}

// PrometheusOperatorCRDFile is the path of prometheus-operator's CRD file of the plural resource
// given, in the module cache.
func PrometheusOperatorCRDFile(plural string) (string, error) {
	dir, err := prometheusOperatorDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+plural+".yaml"), nil
}
