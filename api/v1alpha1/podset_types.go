package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationTemplateHash records on each pod the hash of the PodSet template it was created from,
// so that a template change finds the pods to replace without comparing pod specs, which the API
// server defaults and the scheduler fills in.
const AnnotationTemplateHash = "apps.appkeeper.dev/template-hash"

// PodSetPodNamesLimit bounds status.podNames, so that a large PodSet keeps a small status.
const PodSetPodNamesLimit = 256

// PodSetTemplateMetadata is the part of a pod's metadata a PodSet template may set.
type PodSetTemplateMetadata struct {
	// Labels are added to every pod; they cannot override the labels the operator selects on.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to every pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodSetTemplate is the pod every replica runs, in the shape of a Deployment's pod template. It
// declares the metadata it keeps instead of embedding metav1.ObjectMeta, whose schema
// controller-gen leaves empty, so that the API server would prune the labels and annotations.
type PodSetTemplate struct {
	// Metadata holds the labels and annotations of the pods.
	// +optional
	Metadata PodSetTemplateMetadata `json:"metadata,omitempty"`

	// Spec is the spec of every pod. The pods run until replaced: restartPolicy is Always and no
	// activeDeadlineSeconds ends them. Unlike a Deployment's pods, a PodSet's pods mount no
	// ServiceAccount token unless spec.automountServiceAccountToken is true: left unset, it is
	// false, since most workloads never call the Kubernetes API. A pod that does sets it to true.
	// +kubebuilder:validation:XValidation:rule="size(self.containers) > 0",message="spec.template.spec.containers must list at least one container"
	// +kubebuilder:validation:XValidation:rule="!has(self.restartPolicy) || self.restartPolicy == 'Always'",message="spec.template.spec.restartPolicy must be Always: a PodSet's pods run until replaced, and a pod that exits is replaced",fieldPath=".restartPolicy"
	// +kubebuilder:validation:XValidation:rule="!has(self.activeDeadlineSeconds)",message="spec.template.spec.activeDeadlineSeconds must not be set: a PodSet's pods run until replaced",fieldPath=".activeDeadlineSeconds"
	// +required
	Spec corev1.PodSpec `json:"spec"`
}

// PodSetSpec is the set of pods a user asks for.
type PodSetSpec struct {
	// Replicas is the number of pods. Defaults to 1; at least 0.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Template is the pod each replica runs. A change replaces every pod, maxUnavailable at a time.
	// +required
	Template PodSetTemplate `json:"template"`

	// MaxUnavailable is how many of the desired pods may be missing or not ready while pods of an
	// old template are replaced. Defaults to 1; at least 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxUnavailable int32 `json:"maxUnavailable,omitempty"`

	// Upgrade says how long a change of the pods may take and whether a failed one is rolled back.
	// +kubebuilder:default={}
	// +optional
	Upgrade UpgradePolicy `json:"upgrade,omitempty"`
}

// PodSetStatus is what the operator observed of the pods.
type PodSetStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods that exist and are not terminating, of any template.
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of those pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// UpdatedReplicas is the number of those pods created from the current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// PodNames are the names of those pods in ordinal order, at most 256 of them.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	PodNames []string `json:"podNames,omitempty"`

	// Selector selects the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// TemplateHash is the hash of the template every pod was created from, once a rollout to it
	// has completed; pods carry theirs in the apps.appkeeper.dev/template-hash annotation.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`

	// Conditions are Available, Progressing and Degraded, summarised as Ready and Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Rollout is what the operator knows of the pods' revisions: the running and the desired one,
	// the last good one, and the one rolled back.
	// +optional
	Rollout RolloutStatus `json:"rollout,omitempty"`
}

// PodSet runs a number of bare pods from one template, owned directly by the PodSet.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=pset,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 52",message="metadata.name must be a DNS-1035 label of at most 52 characters: it names the pods, whose names are their hostnames"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready-Pods",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.rollout.currentRevision`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Desired-Revision",type=string,JSONPath=`.status.rollout.updateRevision`,priority=1
// +kubebuilder:printcolumn:name="Rollbacks",type=integer,JSONPath=`.status.rollout.rollbacks`,priority=1
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,priority=1
type PodSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set of pods a user asks for.
	Spec PodSetSpec `json:"spec"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that judge health from it (kstatus)
	// see a new resource as not yet observed rather than as healthy.
	// +kubebuilder:default={observedGeneration: 0}
	Status PodSetStatus `json:"status,omitempty"`
}

// PodSetList is a list of PodSets.
// +kubebuilder:object:root=true
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodSet{}, &PodSetList{})
}

// MaxPodSetNameLength bounds metadata.name: a pod is named <name>-<ordinal>, and that name is its
// hostname, which must fit in a DNS label of 63 characters for every ordinal spec.replicas allows.
const MaxPodSetNameLength = 52

// SelectorLabels select this PodSet's pods and no others.
func (ps *PodSet) SelectorLabels() map[string]string {
	return map[string]string{LabelName: "podset", LabelInstance: ps.Name}
}

// DesiredReplicas is spec.replicas with its default applied.
func (ps *PodSet) DesiredReplicas() int32 {
	if ps.Spec.Replicas == nil {
		return 1
	}
	return *ps.Spec.Replicas
}

// MaxUnavailableReplicas is spec.maxUnavailable with its default applied.
func (ps *PodSet) MaxUnavailableReplicas() int32 {
	if ps.Spec.MaxUnavailable < 1 {
		return 1
	}
	return ps.Spec.MaxUnavailable
}

// InstanceStatus is the status the shared reconcile pass compares and writes, with its conditions
// and rollout.
func (ps *PodSet) InstanceStatus() (status any, conditions []metav1.Condition, rollout RolloutStatus) {
	return ps.Status, ps.Status.Conditions, ps.Status.Rollout
}
