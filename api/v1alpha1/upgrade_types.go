package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultProgressDeadlineSeconds is how long a new revision may take to become fully available
// when spec.upgrade.progressDeadlineSeconds is unset, as for a Deployment.
const DefaultProgressDeadlineSeconds = 600

// UpgradePolicy says how long a change of the pods may take and what happens when it fails.
type UpgradePolicy struct {
	// ProgressDeadlineSeconds is how long, in seconds, the pods of a new revision may take to
	// all become ready. A rollout that has not completed by then has failed, as has one whose new
	// pods crash-loop, cannot pull their image or cannot be configured, whatever the time.
	// Defaults to 600; from 10 to 86400.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// AutoRollback puts the last revision that was fully available back when a rollout fails,
	// leaving the spec as written; the failed revision is not tried again until the spec
	// changes. When false, a failed rollout stays as it is and Degraded says why. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	AutoRollback *bool `json:"autoRollback,omitempty"`
}

// Deadline is the progress deadline in seconds, with its default applied.
func (p UpgradePolicy) Deadline() int32 {
	if p.ProgressDeadlineSeconds == nil {
		return DefaultProgressDeadlineSeconds
	}
	return *p.ProgressDeadlineSeconds
}

// RollsBack is whether a failed rollout is undone, with the default applied.
func (p UpgradePolicy) RollsBack() bool {
	return p.AutoRollback == nil || *p.AutoRollback
}

// RolloutStatus is what the operator knows of the revisions of an instance's pods. A revision is
// identified by a hash of the pod template the operator builds from the spec.
type RolloutStatus struct {
	// CurrentRevision is the revision the operator applies to the pods: the spec's, or the last
	// good one while the spec's revision is rolled back.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`

	// UpdateRevision is the revision of the spec as written.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// UpdateTime is when the spec first asked for UpdateRevision: the progress deadline runs from it.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`

	// LastGood is the last revision whose pods were all available.
	// +optional
	LastGood *GoodRevision `json:"lastGood,omitempty"`

	// Failed is the revision that failed and was rolled back, until the spec changes.
	// +optional
	Failed *FailedRevision `json:"failed,omitempty"`

	// Rollbacks counts the failed revisions the operator has rolled back.
	// +optional
	Rollbacks int32 `json:"rollbacks,omitempty"`
}

// GoodRevision is a revision whose pods were all available.
type GoodRevision struct {
	// Name of the revision.
	Name string `json:"name"`

	// Image the revision runs.
	// +optional
	Image string `json:"image,omitempty"`

	// ConfigHash identifies the server configuration the revision runs with, where the kind has one.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`

	// Time the revision's pods were first seen all available.
	Time metav1.Time `json:"time"`

	// Spec is the spec the revision was built from, kept so that a rollback rebuilds its pods.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	Spec runtime.RawExtension `json:"spec,omitzero"`
}

// FailedRevision is a revision whose rollout failed.
type FailedRevision struct {
	// Name of the revision.
	Name string `json:"name"`

	// Image the revision runs.
	// +optional
	Image string `json:"image,omitempty"`

	// Reason the rollout failed: a pod's reason (CrashLoopBackOff, ImagePullBackOff, …) or
	// ProgressDeadlineExceeded.
	Reason string `json:"reason"`

	// Message says what failed, in words.
	// +optional
	Message string `json:"message,omitempty"`

	// Time the failure was seen and the last good revision put back.
	Time metav1.Time `json:"time"`

	// Backup is the backup taken before the rollout, for a kind that takes one: restore it if the
	// failed server changed the data.
	// +optional
	Backup string `json:"backup,omitempty"`
}

// Reasons and Events of a rollback.
const (
	// ReasonRolledBack: the spec's revision failed and the last good revision runs instead.
	ReasonRolledBack = "RolledBack"
	// ReasonRollbackRefused: the spec's revision failed and the last good revision cannot be put
	// back, e.g. because its server cannot read data a newer one wrote.
	ReasonRollbackRefused = "RollbackRefused"
	// EventRolledBack is a Warning naming the failed and the restored revision.
	EventRolledBack = ReasonRolledBack
)

// RevisionAnnotation on a pod template and its pods names the revision they were built from.
const RevisionAnnotation = "apps.appkeeper.dev/revision"
