package v1alpha1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultWordPressImage is the official WordPress image with Apache and PHP.
const DefaultWordPressImage = "wordpress:6.8.3-php8.3-apache"

// WordPressAppName is the app.kubernetes.io/name label of every WordPress's children.
const WordPressAppName = "wordpress"

// WordPressPort is the port Apache listens on in the official image.
const WordPressPort = 80

// DefaultWordPressDatabase names the database and user an inline MySQL gets when its spec names none.
const DefaultWordPressDatabase = "wordpress"

// ConditionDatabaseReady is True when the WordPress's MySQL is Available.
const ConditionDatabaseReady = "DatabaseReady"

// Reasons of the DatabaseReady condition.
const (
	ReasonWaitingForDatabase    = "WaitingForDatabase"
	ReasonDatabaseMisconfigured = "DatabaseMisconfigured"
)

// LocalObjectReference names an object in the resource's namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// WordPressDatabase is the MySQL a WordPress keeps its posts in: one it runs itself, or one that
// exists already. Which of the two cannot change after creation, nor can the fields its own MySQL
// reads only when it first starts.
// +kubebuilder:validation:XValidation:rule="has(self.mysqlRef) != has(self.mysql)",message="spec.database must set exactly one of mysqlRef and mysql"
// +kubebuilder:validation:XValidation:rule="has(self.mysql) == has(oldSelf.mysql)",message="spec.database cannot switch between mysqlRef and mysql after creation: the site's MySQL would be orphaned or another taken over"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(oldSelf.mysql) || (has(self.mysql.database) ? self.mysql.database : 'wordpress') == (has(oldSelf.mysql.database) ? oldSelf.mysql.database : 'wordpress')",message="spec.database.mysql.database is immutable: it is created when the server first starts",fieldPath=".mysql.database"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(oldSelf.mysql) || (has(self.mysql.user) ? self.mysql.user : 'wordpress') == (has(oldSelf.mysql.user) ? oldSelf.mysql.user : 'wordpress')",message="spec.database.mysql.user is immutable: it is created when the server first starts",fieldPath=".mysql.user"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(oldSelf.mysql) || has(self.mysql.credentialsSecretRef) == has(oldSelf.mysql.credentialsSecretRef) && (!has(self.mysql.credentialsSecretRef) || self.mysql.credentialsSecretRef == oldSelf.mysql.credentialsSecretRef)",message="spec.database.mysql.credentialsSecretRef is immutable: the server keeps the passwords it first started with",fieldPath=".mysql.credentialsSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(oldSelf.mysql) || (has(oldSelf.mysql.members) ? oldSelf.mysql.members : 1) == 1 || (has(self.mysql.members) ? self.mysql.members : 1) >= 2",message="spec.database.mysql.members cannot go back to 1 once the site's MySQL is a cluster: 2 is the fewest",fieldPath=".mysql.members"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(oldSelf.mysql) || has(self.mysql.storage) == has(oldSelf.mysql.storage) && (!has(self.mysql.storage) || self.mysql.storage == oldSelf.mysql.storage)",message="spec.database.mysql.storage is immutable: the data volume is created once",fieldPath=".mysql.storage"
type WordPressDatabase struct {
	// MySQLRef names a MySQL in the same namespace. It needs spec.database and spec.user. It may
	// name another MySQL later, but a WordPress made with mysqlRef cannot switch to mysql.
	// +optional
	MySQLRef *LocalObjectReference `json:"mysqlRef,omitempty"`

	// MySQL is the spec of a MySQL the WordPress owns, named <name>-mysql. Its database and user
	// default to "wordpress". A WordPress made with mysql cannot switch to mysqlRef: its own MySQL
	// would be left without an owner.
	// +optional
	MySQL *MySQLSpec `json:"mysql,omitempty"`
}

// WordPressStorage is the volume that keeps wp-content: uploads, themes and plugins.
type WordPressStorage struct {
	// Size of the volume. Defaults to 1Gi.
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.size must be above zero"
	// +optional
	Size resource.Quantity `json:"size,omitzero"`

	// StorageClassName of the volume; the cluster's default class when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// AccessModes of the volume. More than one replica needs ReadWriteMany, since every replica
	// mounts it. Defaults to ReadWriteOnce.
	// +kubebuilder:default={"ReadWriteOnce"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:Enum=ReadWriteOnce;ReadWriteMany;ReadWriteOncePod
	// +listType=atomic
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
}

// WordPressSpec is the WordPress site a user asks for.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas <= 1 || self.storage.accessModes.exists(m, m == 'ReadWriteMany')",message="spec.storage.accessModes must include ReadWriteMany when spec.replicas is above 1: every replica mounts wp-content"
// +kubebuilder:validation:XValidation:rule="has(self.storage) == has(oldSelf.storage) && (!has(self.storage) || self.storage == oldSelf.storage)",message="spec.storage is immutable: the volume is created once",fieldPath=".storage"
// +kubebuilder:validation:XValidation:rule="has(self.restore) == has(oldSelf.restore) && (!has(self.restore) || self.restore == oldSelf.restore)",message="spec.restore is immutable: the site is restored once, before it first starts",fieldPath=".restore"
// +kubebuilder:validation:XValidation:rule="!has(self.restore) || !has(self.database.mysqlRef)",message="spec.restore needs the site's own MySQL (spec.database.mysql): that MySQL loads the restore point's database",fieldPath=".restore"
type WordPressSpec struct {
	// Image is the WordPress image. Defaults to wordpress:6.8.3-php8.3-apache. At most 1024
	// characters.
	// +kubebuilder:default="wordpress:6.8.3-php8.3-apache"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$') && [self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, [d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + (!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= 255)))",message="spec.image must be an image reference such as wordpress:6.8.3 or registry:5000/team/wordpress:6.8.3: [registry[:port]/]name[:tag][@digest], the name in lowercase and its path at most 255 characters: the name less its registry, as library/name for a Docker Hub name of one component"
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of WordPress pods. Defaults to 1; at least 0.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Database is the MySQL the site uses. Defaults to a MySQL the WordPress runs itself, with
	// that kind's defaults.
	// +kubebuilder:default={mysql:{}}
	// +optional
	Database WordPressDatabase `json:"database,omitzero"`

	// Storage keeps wp-content. It cannot change once the volume exists: more than one replica
	// needs ReadWriteMany from the start.
	// +kubebuilder:default={}
	// +optional
	Storage WordPressStorage `json:"storage,omitempty"`

	// Service exposes the site.
	// +kubebuilder:default={}
	// +optional
	Service WebServerService `json:"service,omitempty"`

	// Resources of the WordPress container. Its memory limit, or request, sizes Apache's workers:
	// see tuning.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Tuning sizes Apache's workers from spec.resources.
	// +kubebuilder:default={}
	// +optional
	Tuning WorkerTuning `json:"tuning,omitempty"`

	// DeletionPolicy is what happens to the wp-content volume when the WordPress is deleted:
	// Retain keeps it for a WordPress of the same name to take over, Delete removes it. The
	// database follows its own MySQL's deletionPolicy. Defaults to Retain.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Restore starts the site from a restore point (a WordPressBackup): its own MySQL loads the
	// database, and wp-content is filled before the first pod starts. It cannot be set, changed or
	// removed afterwards.
	// +optional
	Restore *WordPressRestore `json:"restore,omitempty"`

	// Upgrade says how long a change of the pods may take and whether a failed one is rolled back.
	// +kubebuilder:default={}
	// +optional
	Upgrade UpgradePolicy `json:"upgrade,omitempty"`
}

// WordPressStatus is what the operator observed of the site.
type WordPressStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// URL is the site's address inside the cluster.
	// +optional
	URL string `json:"url,omitempty"`

	// Replicas is the number of pods, of any version.
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of pods ready to serve.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Selector selects the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Image is the image every pod runs, once a rollout to it has completed.
	// +optional
	Image string `json:"image,omitempty"`

	// Restore says what the site was restored from.
	// +optional
	Restore *MySQLRestoreStatus `json:"restore,omitempty"`

	// Tuning is what the operator computed from spec.resources; unset when spec.tuning.mode is
	// Off.
	// +optional
	Tuning *TuningStatus `json:"tuning,omitempty"`

	// Conditions are Available, Progressing, Degraded and DatabaseReady, summarised as Ready and Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Rollout is what the operator knows of the pods' revisions: the running and the desired one,
	// the last good one, and the one rolled back.
	// +optional
	Rollout RolloutStatus `json:"rollout,omitempty"`
}

// WordPress runs a WordPress site on MySQL.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=wp,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 46",message="metadata.name must be a DNS-1035 label of at most 46 characters: it names the Service and the site's own MySQL, <name>-mysql"
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
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,priority=1
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.status.conditions[?(@.type=="DatabaseReady")].status`,priority=1
type WordPress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the WordPress site a user asks for.
	// +kubebuilder:default={}
	Spec WordPressSpec `json:"spec,omitempty"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that judge health from it (kstatus)
	// see a new resource as not yet observed rather than as healthy.
	// +kubebuilder:default={observedGeneration: 0}
	Status WordPressStatus `json:"status,omitempty"`
}

// WordPressList is a list of WordPresses.
// +kubebuilder:object:root=true
type WordPressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WordPress `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WordPress{}, &WordPressList{})
}

// MaxWordPressNameLength bounds metadata.name: the MySQL a WordPress runs is named
// <name>-mysql, and must itself fit in MaxMySQLNameLength.
const MaxWordPressNameLength = MaxMySQLNameLength - len("-mysql")

// ChildName is the name of the Deployment and of the Service.
func (wp *WordPress) ChildName() string { return wp.Name }

// ContentClaimName is the PVC that keeps wp-content.
func (wp *WordPress) ContentClaimName() string { return wp.Name + "-content" }

// SaltsSecretName holds the generated authentication keys and salts.
func (wp *WordPress) SaltsSecretName() string { return wp.Name + "-salts" }

// MySQLName is the MySQL the site uses: the referenced one, or the one it owns.
func (wp *WordPress) MySQLName() string {
	if wp.Spec.Database.MySQLRef != nil {
		return wp.Spec.Database.MySQLRef.Name
	}
	return wp.Name + "-mysql"
}

// OwnsMySQL is true when the WordPress runs its MySQL itself.
func (wp *WordPress) OwnsMySQL() bool { return wp.Spec.Database.MySQLRef == nil }

// SelectorLabels select this WordPress's pods and no others.
func (wp *WordPress) SelectorLabels() map[string]string {
	return map[string]string{LabelName: WordPressAppName, LabelInstance: wp.Name}
}

// DesiredReplicas is spec.replicas with its default applied.
func (wp *WordPress) DesiredReplicas() int32 {
	if wp.Spec.Replicas == nil {
		return 1
	}
	return *wp.Spec.Replicas
}

// URL is the site's address inside the cluster.
func (wp *WordPress) URL() string {
	port := wp.Spec.Service.Port
	if port == 0 || port == 80 {
		return fmt.Sprintf("http://%s.%s.svc", wp.ChildName(), wp.Namespace)
	}
	return fmt.Sprintf("http://%s.%s.svc:%d", wp.ChildName(), wp.Namespace, port)
}

// RetainsContent is true unless the spec asks for wp-content to go with the WordPress.
func (wp *WordPress) RetainsContent() bool { return wp.Spec.DeletionPolicy != DeletionPolicyDelete }

// InstanceStatus is the status the shared reconcile pass compares and writes, with its conditions
// and rollout.
func (wp *WordPress) InstanceStatus() (status any, conditions []metav1.Condition, rollout RolloutStatus) {
	return wp.Status, wp.Status.Conditions, wp.Status.Rollout
}
