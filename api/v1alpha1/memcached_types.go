package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultMemcachedImage is the official memcached image. It runs as the user memcache, whose uid
// is 11211; the user is named rather than numeric, so the pod states the uid for runAsNonRoot to be
// verifiable.
const DefaultMemcachedImage = "memcached:1.6.38-alpine"

// DefaultMemcachedPort is the port memcached listens on unless the spec says otherwise.
const DefaultMemcachedPort = 11211

// MemcachedUser is the uid of the memcache user in the official image.
const MemcachedUser = 11211

// MemcachedAppName is the app.kubernetes.io/name label of every Memcached's pods.
const MemcachedAppName = "memcached"

// MinMemcachedMemoryMB is the least item memory memcached starts with: twice its largest item.
const MinMemcachedMemoryMB = 2

// MaxMemcachedSize bounds spec.size, and so the length of status.nodes.
const MaxMemcachedSize = 256

// MemcachedSpec is the memcached cluster a user asks for.
// +kubebuilder:validation:XValidation:rule="!has(self.monitoring) || !has(self.monitoring.enabled) || !self.monitoring.enabled || !has(self.port) || self.port != 9150",message="spec.port must not be 9150 while spec.monitoring.enabled is true: the exporter serves its metrics on port 9150 of the same pod",fieldPath=".port"
type MemcachedSpec struct {
	// Size is the number of memcached members. Each keeps a stable name, so that clients hashing
	// keys over the members keep most keys where they are when the size changes. Defaults to 1;
	// from 0 to 256.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	// +optional
	Size *int32 `json:"size,omitempty"`

	// Image is the memcached container image. Defaults to memcached:1.6.38-alpine. At most 1024
	// characters.
	// +kubebuilder:default="memcached:1.6.38-alpine"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$') && [self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, [d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + (!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= 255)))",message="spec.image must be an image reference such as memcached:1.6.38 or registry:5000/team/memcached:1.6.38: [registry[:port]/]name[:tag][@digest], the name in lowercase and its path at most 255 characters: the name less its registry, as library/name for a Docker Hub name of one component"
	// +optional
	Image string `json:"image,omitempty"`

	// Port is the port memcached listens on, in the pod and on the headless Service. Defaults to
	// 11211; from 1 to 65535. While monitoring is on it cannot be 9150, the exporter's.
	// +kubebuilder:default=11211
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// MemoryMB is the memory memcached uses for items (its -m flag). When unset it is 80 % of the
	// memory limit, leaving room for connections and the hash table, or else memcached's default
	// of 64 applies. When set with a memory limit, keep it well below the limit: memcached grows
	// to it as the cache fills, and the pod is killed when it exceeds the limit. memcached refuses
	// less than 2, twice its largest item of 1 MB.
	// +kubebuilder:validation:Minimum=2
	// +optional
	MemoryMB *int32 `json:"memoryMB,omitempty"`

	// MaxConnections is the most simultaneous connections each member accepts (its -c flag);
	// memcached's default of 1024 applies when unset. memcached also caps its open files at this
	// number and needs a few dozen for its own threads and sockets: below about 32 it exits at
	// start, hence the minimum of 64.
	// +kubebuilder:validation:Minimum=64
	// +optional
	MaxConnections *int32 `json:"maxConnections,omitempty"`

	// Resources of the memcached container. A memory limit sizes the cache when memoryMB is unset.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// PodSecurityContext replaces the restricted default (non-root as uid 11211, RuntimeDefault
	// seccomp).
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// SecurityContext replaces the restricted container default (no privilege escalation, all
	// capabilities dropped, read-only root filesystem).
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// NodeSelector constrains the nodes the pods run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity of the pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PodLabels are added to the pods; they cannot override the labels the operator selects on.
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// Upgrade says how long a change of the pods may take and whether a failed one is rolled back.
	// +kubebuilder:default={}
	// +optional
	Upgrade UpgradePolicy `json:"upgrade,omitempty"`

	// Monitoring runs memcached's Prometheus exporter in each member pod.
	// +optional
	Monitoring Monitoring `json:"monitoring,omitempty"`
}

// MemcachedStatus is what the operator observed of the memcached cluster.
type MemcachedStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Size is the number of member pods the StatefulSet runs, ready or not.
	// +optional
	Size int32 `json:"size"`

	// ReadyReplicas is the number of members ready to serve.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Image is the image the members run, once a rollout to it has completed.
	// +optional
	Image string `json:"image,omitempty"`

	// Nodes are the names of the members ready to serve, in ordinal order. Each resolves as
	// <name>.<metadata.name>.<namespace>.svc through the headless Service. At most 256 of them.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// Selector selects the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

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

// Memcached runs a memcached cluster of stably named members behind a headless Service.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.size,selectorpath=.status.selector
// +kubebuilder:resource:shortName=mc,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 52",message="metadata.name must be a DNS-1035 label of at most 52 characters: it names the StatefulSet, its pods and the headless Service"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready-Pods",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.image`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.rollout.currentRevision`,priority=1
// +kubebuilder:printcolumn:name="Desired-Revision",type=string,JSONPath=`.status.rollout.updateRevision`,priority=1
// +kubebuilder:printcolumn:name="Rollbacks",type=integer,JSONPath=`.status.rollout.rollbacks`,priority=1
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,priority=1
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the memcached cluster a user asks for.
	// +kubebuilder:default={}
	Spec MemcachedSpec `json:"spec,omitempty"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that judge health from it (kstatus)
	// see a new resource as not yet observed rather than as healthy.
	// +kubebuilder:default={observedGeneration: 0}
	Status MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcacheds.
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Memcached{}, &MemcachedList{})
}

// MaxMemcachedNameLength bounds metadata.name: the StatefulSet's revisions are labelled
// <ChildName>-<10-character hash>, a label value of at most 63 characters.
const MaxMemcachedNameLength = 52

// ChildName is the name of the StatefulSet and of the headless Service that run this Memcached;
// the members are <ChildName>-0 to <ChildName>-<size-1>.
func (mc *Memcached) ChildName() string { return mc.Name }

// MonitoringEnabled tells whether the spec asks for the exporter, and so for a PodMonitor.
func (mc *Memcached) MonitoringEnabled() bool { return mc.Spec.Monitoring.Enabled }

// SelectorLabels select this Memcached's pods and no others.
func (mc *Memcached) SelectorLabels() map[string]string {
	return map[string]string{LabelName: MemcachedAppName, LabelInstance: mc.Name}
}

// DesiredSize is spec.size with its default applied.
func (mc *Memcached) DesiredSize() int32 {
	if mc.Spec.Size == nil {
		return 1
	}
	return *mc.Spec.Size
}

// InstanceStatus is the status the shared reconcile pass compares and writes, with its conditions
// and rollout.
func (mc *Memcached) InstanceStatus() (status any, conditions []metav1.Condition, rollout RolloutStatus) {
	return mc.Status, mc.Status.Conditions, mc.Status.Rollout
}
