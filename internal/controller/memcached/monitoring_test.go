package memcached_test

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func TestMonitoringRunsTheExporterAndRollsTheMembers(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, func(mc *appsv1alpha1.Memcached) { mc.Spec.Monitoring.Enabled = true })
	childrenExist(t, ns)
	var revision string
	await.Eventually(t, timeout, func(context.Context) error {
		template := get(t, ns, "cache", &appsv1.StatefulSet{}).Spec.Template
		if problem := inspect.ExporterProblem(template, appsv1alpha1.DefaultMemcachedExporterImage, 9150,
			"--memcached.address=127.0.0.1:11211"); problem != "" {
			return errors.New(problem)
		}
		if revision = get(t, ns, "cache", &appsv1alpha1.Memcached{}).Status.Rollout.UpdateRevision; revision == "" {
			return errors.New("no revision in the status yet")
		}
		return nil
	})

	mc := &appsv1alpha1.Memcached{}
	mc.Namespace, mc.Name = ns, "cache"
	if err := k8s.Patch(context.Background(), mc, client.RawPatch("application/merge-patch+json",
		[]byte(`{"spec":{"monitoring":{"enabled":false}}}`))); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if inspect.HasContainer(get(t, ns, "cache", &appsv1.StatefulSet{}).Spec.Template, "exporter") {
			return errors.New("the exporter stays with monitoring off")
		}
		if get(t, ns, "cache", &appsv1alpha1.Memcached{}).Status.Rollout.UpdateRevision == revision {
			return errors.New("turning monitoring off is no new revision")
		}
		return nil
	})
}
