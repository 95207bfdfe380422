package kube

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// terminatingGuard is a client that writes nothing in a namespace believed to be being deleted,
// refusing the write itself as the API server would, and that learns of such a namespace from the
// API server's refusals. A pass that met the first refusal so writes no status there either, which
// would tell of a failure when there is none. Deletes pass: they only help the deletion along.
type terminatingGuard struct {
	client.Client
	namespaces *TerminatingNamespaces
}

// write sends a write in namespace unless the namespace is believed to be going.
func (g terminatingGuard) write(ctx context.Context, namespace string, send func() error) error {
	if g.namespaces.leaving(namespace, time.Now()) {
		return errNamespaceTerminating(namespace)
	}
	err := send()
	if namespaceTerminating(err) && g.namespaces.refused(namespace, time.Now()) {
		log.FromContext(ctx).Info("namespace is being deleted; appkeeper leaves it alone", "terminatingNamespace", namespace)
	}
	return err
}

func (g terminatingGuard) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return g.write(ctx, obj.GetNamespace(), func() error { return g.Client.Create(ctx, obj, opts...) })
}

func (g terminatingGuard) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return g.write(ctx, obj.GetNamespace(), func() error { return g.Client.Update(ctx, obj, opts...) })
}

func (g terminatingGuard) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return g.write(ctx, obj.GetNamespace(), func() error { return g.Client.Patch(ctx, obj, patch, opts...) })
}

func (g terminatingGuard) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return g.write(ctx, namespaceOf(obj), func() error { return g.Client.Apply(ctx, obj, opts...) })
}

func (g terminatingGuard) Status() client.SubResourceWriter {
	return g.SubResource("status")
}

func (g terminatingGuard) SubResource(subResource string) client.SubResourceClient {
	return guardedSubResource{SubResourceClient: g.Client.SubResource(subResource), guard: g}
}

type guardedSubResource struct {
	client.SubResourceClient
	guard terminatingGuard
}

func (s guardedSubResource) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	return s.guard.write(ctx, obj.GetNamespace(), func() error { return s.SubResourceClient.Create(ctx, obj, subResource, opts...) })
}

func (s guardedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.guard.write(ctx, obj.GetNamespace(), func() error { return s.SubResourceClient.Update(ctx, obj, opts...) })
}

func (s guardedSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.guard.write(ctx, obj.GetNamespace(), func() error { return s.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

func (s guardedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.guard.write(ctx, namespaceOf(obj), func() error { return s.SubResourceClient.Apply(ctx, obj, opts...) })
}

// namespaceOf is the namespace an apply configuration names: a generated one's, or an
// unstructured one's.
func namespaceOf(obj runtime.ApplyConfiguration) string {
	switch ac := obj.(type) {
	case interface{ GetNamespace() *string }:
		if ns := ac.GetNamespace(); ns != nil {
			return *ns
		}
	case interface{ GetNamespace() string }:
		return ac.GetNamespace()
	}
	return ""
}
