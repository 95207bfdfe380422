package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/config/samples"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// applySamples creates every sample and waits until each reports Available=True for its current
// generation.
func applySamples(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	objects, err := samples.Objects()
	if err != nil {
		return err
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create sample %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	var waiting []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, sampleTimeout, true, func(ctx context.Context) (bool, error) {
		waiting = waiting[:0]
		for _, obj := range objects {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
				return false, err
			}
			if !isAvailable(live) {
				waiting = append(waiting, live.GetKind()+"/"+live.GetName())
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("samples not Available (%s): %w", strings.Join(waiting, ", "), err)
	}
	return nil
}

// isAvailable reports whether obj's Available condition is True for its current generation.
func isAvailable(obj *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conditions {
		c, ok := raw.(map[string]any)
		if !ok || c["type"] != "Available" {
			continue
		}
		generation, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		return c["status"] == "True" && generation == obj.GetGeneration()
	}
	return false
}
