package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultWebServerImage runs nginx as a non-root user listening on 8080, so that the pods meet the
// restricted pod security standard without changes.
const DefaultWebServerImage = "nginxinc/nginx-unprivileged:1.27.4-alpine"

// ServiceType is how a WebServer is exposed.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// The exposure types a WebServer supports.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// WebServerService describes the Service in front of the web server pods.
// +kubebuilder:validation:XValidation:rule="!has(self.nodePort) || self.type != 'ClusterIP'",message="spec.service.nodePort is only allowed when spec.service.type is NodePort or LoadBalancer"
type WebServerService struct {
	// Type of the Service. Defaults to ClusterIP.
	// +kubebuilder:default=ClusterIP
	// +optional
	Type ServiceType `json:"type,omitempty"`

	// Port the Service listens on. Defaults to 80; from 1 to 65535.
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// NodePort to use when Type is NodePort or LoadBalancer, from 30000 to 32767; chosen by the
	// cluster when unset.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	// +optional
	NodePort *int32 `json:"nodePort,omitempty"`
}

// WebServerSpec is the web server cluster a user asks for.
// +kubebuilder:validation:XValidation:rule="!has(self.monitoring) || !has(self.monitoring.enabled) || !self.monitoring.enabled || !has(self.port) || self.port != 9113",message="spec.port must not be 9113 while spec.monitoring.enabled is true: the exporter serves its metrics on port 9113 of the same pod",fieldPath=".port"
type WebServerSpec struct {
	// Replicas is the number of nginx pods. Defaults to 1; at least 0.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the nginx container image. Defaults to nginxinc/nginx-unprivileged:1.27.4-alpine.
	// At most 1024 characters.
	// +kubebuilder:default="nginxinc/nginx-unprivileged:1.27.4-alpine"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$') && [self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, [d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + (!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= 255)))",message="spec.image must be an image reference such as nginx:1.27.4 or registry:5000/team/nginx:1.27.4: [registry[:port]/]name[:tag][@digest], the name in lowercase and its path at most 255 characters: the name less its registry, as library/name for a Docker Hub name of one component"
	// +optional
	Image string `json:"image,omitempty"`

	// Port is the port nginx listens on inside the pod: the operator writes nginx's server block
	// (ConfigMap <name>-nginx, mounted over /etc/nginx/conf.d/default.conf) to listen on it and to
	// serve /usr/share/nginx/html, with /healthz for the readiness probe. A change rolls the pods.
	// Defaults to 8080; from 1 to 65535. While monitoring is on it cannot be 9113, the exporter's;
	// it may be 8079, since nginx tells its loopback-only stub_status server apart by address.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Service exposes the pods.
	// +kubebuilder:default={}
	// +optional
	Service WebServerService `json:"service,omitempty"`

	// PodSecurityContext replaces the restricted default (non-root, RuntimeDefault seccomp).
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// SecurityContext replaces the restricted container default (no privilege escalation, all
	// capabilities dropped). Relax it only for an image that needs root.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// Resources of the nginx container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

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

	// Monitoring runs nginx's Prometheus exporter in each pod, reading nginx's stub_status page,
	// which nginx then serves on 127.0.0.1:8079 only.
	// +optional
	Monitoring Monitoring `json:"monitoring,omitempty"`
}

// WebServerStatus is what the operator observed of the web server cluster.
type WebServerStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods, of any version.
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of pods ready to serve.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// UpdatedReplicas is the number of pods running the current spec.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// Selector selects the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Image is the image every pod runs, once a rollout to it has completed.
	// +optional
	Image string `json:"image,omitempty"`

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

// WebServer runs an nginx web server cluster behind a Service.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ws,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="metadata.name must be a DNS-1035 label of at most 63 characters: it names the Service"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready-Pods",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.image`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.rollout.currentRevision`,priority=1
// +kubebuilder:printcolumn:name="Desired-Revision",type=string,JSONPath=`.status.rollout.updateRevision`,priority=1
// +kubebuilder:printcolumn:name="Rollbacks",type=integer,JSONPath=`.status.rollout.rollbacks`,priority=1
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,priority=1
type WebServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the web server cluster a user asks for.
	// +kubebuilder:default={}
	Spec WebServerSpec `json:"spec,omitempty"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that judge health from it (kstatus)
	// see a new resource as not yet observed rather than as healthy.
	// +kubebuilder:default={observedGeneration: 0}
	Status WebServerStatus `json:"status,omitempty"`
}

// WebServerList is a list of WebServers.
// +kubebuilder:object:root=true
type WebServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebServer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WebServer{}, &WebServerList{})
}

// MaxWebServerNameLength bounds metadata.name: the Service is named after the WebServer.
const MaxWebServerNameLength = 63

// ChildName is the name of the Deployment and Service that run this WebServer.
func (ws *WebServer) ChildName() string { return ws.Name }

// ConfigMapName names the ConfigMap holding the WebServer's nginx server block.
func (ws *WebServer) ConfigMapName() string { return ws.Name + "-nginx" }

// MonitoringEnabled tells whether the spec asks for the exporter, and so for a PodMonitor.
func (ws *WebServer) MonitoringEnabled() bool { return ws.Spec.Monitoring.Enabled }

// SelectorLabels select this WebServer's pods and no others.
func (ws *WebServer) SelectorLabels() map[string]string {
	return map[string]string{LabelName: "webserver", LabelInstance: ws.Name}
}

// DesiredReplicas is spec.replicas with its default applied.
func (ws *WebServer) DesiredReplicas() int32 {
	if ws.Spec.Replicas == nil {
		return 1
	}
	return *ws.Spec.Replicas
}

// InstanceStatus is the status the shared reconcile pass compares and writes, with its conditions
// and rollout.
func (ws *WebServer) InstanceStatus() (status any, conditions []metav1.Condition, rollout RolloutStatus) {
	return ws.Status, ws.Status.Conditions, ws.Status.Rollout
}
