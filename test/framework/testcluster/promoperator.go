package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/internal/podmonitor"
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

// Selecting is a resource whose pods a PodMonitor selects.
type Selecting interface {
	client.Object
	SelectorLabels() map[string]string
}

// PodMonitorProblem says what is wrong with owner's PodMonitor, as prometheus-operator would read
// it, or that there is none.
func PodMonitorProblem(ctx context.Context, c client.Client, owner Selecting) error {
	pm := podmonitor.New()
	if err := c.Get(ctx, client.ObjectKeyFromObject(owner), pm); err != nil {
		return err
	}
	if ref := metav1.GetControllerOf(pm); ref == nil || ref.UID != owner.GetUID() {
		return fmt.Errorf("the PodMonitor's controller is %v, want %s", ref, owner.GetName())
	}
	selector, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	if !reflect.DeepEqual(selector, owner.SelectorLabels()) {
		return fmt.Errorf("the PodMonitor selects %v, want the resource's pods %v", selector, owner.SelectorLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if want := []any{map[string]any{"port": "metrics"}}; !reflect.DeepEqual(endpoints, want) {
		return fmt.Errorf("the PodMonitor scrapes %v, want %v", endpoints, want)
	}
	return nil
}
