package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/config/samples"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// applySamples creates every sample and waits until each reports Ready=True for its current
// generation: serving, its rollout complete, nothing Degraded. With localImages, the samples run the images a real node has loaded.
func applySamples(ctx context.Context, cfg *rest.Config, localImages bool) error {
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	objects, err := samples.Objects()
	if err != nil {
		return err
	}
	for _, obj := range objects {
		if localImages {
			if err := useLocalImages(obj); err != nil {
				return err
			}
		}
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
			if !isReady(live) {
				waiting = append(waiting, live.GetKind()+"/"+live.GetName())
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("samples not Ready (%s): %w", strings.Join(waiting, ", "), err)
	}
	return nil
}

// isReady reports whether obj's Ready condition is True for its current generation.
func isReady(obj *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conditions {
		c, ok := raw.(map[string]any)
		if !ok || c["type"] != "Ready" {
			continue
		}
		generation, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		return c["status"] == "True" && generation == obj.GetGeneration()
	}
	return false
}

// useLocalImages sets, in a sample, the local image that stands for each default one.
func useLocalImages(obj *unstructured.Unstructured) error {
	set := func(image string, path ...string) error {
		return unstructured.SetNestedField(obj.Object, image, path...)
	}
	switch obj.GetKind() {
	case "WebServer":
		return set(localcluster.LocalNginxImage, "spec", "image")
	case "Memcached":
		return set(localcluster.LocalMemcachedImage, "spec", "image")
	case "MySQL":
		return set(localcluster.LocalMariaDBImage, "spec", "image")
	case "WordPress":
		if err := set(localcluster.LocalWordPressImage, "spec", "image"); err != nil {
			return err
		}
		if _, inline, _ := unstructured.NestedMap(obj.Object, "spec", "database", "mysql"); inline {
			return set(localcluster.LocalMariaDBImage, "spec", "database", "mysql", "image")
		}
		return nil
	case "PodSet":
		containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return err
		}
		for _, c := range containers {
			if m, ok := c.(map[string]any); ok {
				m["image"] = localcluster.LocalBusyboxImage
			}
		}
		return unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
	}
	return fmt.Errorf("sample %s %s: no local image for this kind", obj.GetKind(), obj.GetName())
}

// wordPressURL is where the host reaches the WordPress sample: its Service's cluster address, which
// kube-proxy routes on the host of a real node.
func wordPressURL(ctx context.Context, cfg *rest.Config) (string, error) {
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return "", err
	}
	var svc corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "blog"}, &svc); err != nil {
		return "", fmt.Errorf("the WordPress sample's Service: %w", err)
	}
	return "http://" + svc.Spec.ClusterIP + "/", nil
}
