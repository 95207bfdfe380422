package inspect

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/podmonitor"
)

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
