package main

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The peer is the Memcached operator that the operator-sdk and kubebuilder tutorials build, written
// here to the same contract: a reference for what a first controller-runtime operator does with the
// same cluster, so that appkeeper's creation time reads against another operator as well as
// against the floor.

var peerGV = schema.GroupVersion{Group: "peer.bench.appkeeper.dev", Version: "v1alpha1"}

const peerKind = "Memcached"

type peerMemcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              peerMemcachedSpec   `json:"spec,omitempty"`
	Status            peerMemcachedStatus `json:"status,omitempty"`
}

type peerMemcachedSpec struct {
	Size int32 `json:"size,omitempty"`
}

type peerMemcachedStatus struct {
	Nodes      []string           `json:"nodes,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

type peerMemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []peerMemcached `json:"items"`
}

func (m *peerMemcached) DeepCopyObject() runtime.Object {
	out := *m
	m.DeepCopyInto(&out.ObjectMeta)
	out.Status.Nodes = slices.Clone(m.Status.Nodes)
	out.Status.Conditions = slices.Clone(m.Status.Conditions)
	return &out
}

func (l *peerMemcachedList) DeepCopyObject() runtime.Object {
	out := *l
	l.DeepCopyInto(&out.ListMeta)
	out.Items = make([]peerMemcached, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*peerMemcached)
	}
	return &out
}

// peerScheme knows the peer's kind, the built-in kinds it creates and watches, and the CRD kind
// the bench installs it with.
func peerScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	s.AddKnownTypeWithName(peerGV.WithKind(peerKind), &peerMemcached{})
	s.AddKnownTypeWithName(peerGV.WithKind(peerKind+"List"), &peerMemcachedList{})
	metav1.AddToGroupVersion(s, peerGV)
	return s
}

// peerCRD is the smallest definition that serves the tutorial's resource: spec.size, and a status
// subresource with the pod names and the conditions.
func peerCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	condition := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	schema := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size": {Type: "integer", Format: "int32", Minimum: ptr.To(0.0)},
		}},
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"nodes":      {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
			"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &condition}},
		}},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "memcacheds." + peerGV.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: peerGV.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "memcacheds", Singular: "memcached", Kind: peerKind, ListKind: peerKind + "List",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: peerGV.Version, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// installPeerCRD creates the peer's CRD, kept from an earlier run on the same state directory, and
// waits until the API server serves it.
func installPeerCRD(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: peerScheme()})
	if err != nil {
		return err
	}
	crd := peerCRD()
	if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("install the peer's CRD: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the peer's CRD %s is not established", crd.Name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// peerLabels are the labels the tutorial gives the Deployment and its pods.
func peerLabels(name string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": "memcached-operator", "app.kubernetes.io/instance": name,
		"app.kubernetes.io/version": "1.6.38-alpine", "app.kubernetes.io/part-of": "memcached-operator",
		"app.kubernetes.io/created-by": "controller-manager",
	}
}

// peerDeployment is the tutorial's Deployment for m, without an owner reference.
func peerDeployment(m *peerMemcached) *appsv1.Deployment {
	labels := peerLabels(m.Name)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(m.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "memcached", Image: "memcached:1.6.38-alpine", ImagePullPolicy: corev1.PullIfNotPresent,
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1001), AllowPrivilegeEscalation: ptr.To(false),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						Ports:   []corev1.ContainerPort{{ContainerPort: 11211, Name: "memcached"}},
						Command: []string{"memcached", "-m=64", "-o", "modern", "-v"},
					}},
				},
			},
		},
	}
}

// peerReconciler is the tutorial's reconcile loop. Its re-queues after a write are a minute away,
// as the tutorial's: the Deployment watch, not the re-queue, carries an instance to Available.
type peerReconciler struct {
	client.Client
	scheme     *runtime.Scheme
	reconciles atomic.Int64
}

func (r *peerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.reconciles.Add(1)
	m := &peerMemcached{}
	if err := r.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	found := &appsv1.Deployment{}
	err := r.Get(ctx, req.NamespacedName, found)
	if apierrors.IsNotFound(err) {
		d := peerDeployment(m)
		if err := ctrl.SetControllerReference(m, d, r.scheme); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if size := m.Spec.Size; found.Spec.Replicas == nil || *found.Spec.Replicas != size {
		found.Spec.Replicas = &size
		if err := r.Update(ctx, found); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(m.Namespace), client.MatchingLabels(peerLabels(m.Name))); err != nil {
		return ctrl.Result{}, err
	}
	nodes := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		nodes = append(nodes, p.Name)
	}
	// The cache lists in no fixed order: unsorted names would differ from the stored ones at every
	// pass and write the status each time.
	slices.Sort(nodes)
	available := metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "Reconciling",
		Message: fmt.Sprintf("Deployment for custom resource (%s) is not yet available", m.Name)}
	if found.Status.AvailableReplicas == m.Spec.Size {
		available.Status, available.Message = metav1.ConditionTrue,
			fmt.Sprintf("Deployment for custom resource (%s) with %d replicas created successfully", m.Name, m.Spec.Size)
	}
	changed := meta.SetStatusCondition(&m.Status.Conditions, available)
	if !slices.Equal(nodes, m.Status.Nodes) {
		m.Status.Nodes, changed = nodes, true
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	if err := r.Status().Update(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}
