package v1alpha1

import (
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultMySQLImage is the official MySQL 8.4 LTS image. Its mysqld runs as the mysql user, uid 999.
const DefaultMySQLImage = "mysql:8.4.6"

// MySQLUser is the uid and gid of the mysql user in the official image.
const MySQLUser = 999

// MySQLPort is the port mysqld listens on.
const MySQLPort = 3306

// MySQLAppName is the app.kubernetes.io/name label of every MySQL's children.
const MySQLAppName = "mysql"

// Keys of a MySQL's credentials Secret. A Secret named in credentialsSecretRef needs the two
// password keys; the generated one also carries where and as whom to connect.
const (
	SecretKeyRootPassword = "root-password"
	SecretKeyPassword     = "password"
	SecretKeyUser         = "user"
	SecretKeyDatabase     = "database"
	SecretKeyHost         = "host"
	SecretKeyPort         = "port"
)

// DeletionPolicy says what happens to the data of an application when it is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type DeletionPolicy string

const (
	// DeletionPolicyRetain keeps the volumes and the generated credentials, so that a new resource
	// of the same name takes them over with the data and passwords that match.
	DeletionPolicyRetain DeletionPolicy = "Retain"
	// DeletionPolicyDelete removes the volumes and the generated credentials with the resource.
	DeletionPolicyDelete DeletionPolicy = "Delete"
)

// Storage is the persistent volume an application keeps its data on.
type Storage struct {
	// Size of the volume. Defaults to 10Gi.
	// +kubebuilder:default="10Gi"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.size must be above zero"
	// +optional
	Size resource.Quantity `json:"size,omitzero"`

	// StorageClassName of the volume; the cluster's default class when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// Durability is what a commit on a cluster's primary waits for.
// +kubebuilder:validation:Enum=Required;Preferred
type Durability string

const (
	// DurabilityRequired: a commit returns only once a replica holds it. While no replica
	// acknowledges, writes wait, and the status says why: no acknowledged write can be lost.
	DurabilityRequired Durability = "Required"
	// DurabilityPreferred: a commit waits for a replica at most ackTimeout, then the primary
	// commits alone until a replica catches up, and the status says the cluster is unprotected.
	DurabilityPreferred Durability = "Preferred"
)

// Replication is how a cluster's primary waits for its replicas.
// +kubebuilder:validation:XValidation:rule="!has(self.ackTimeout) || (has(self.durability) && self.durability == 'Preferred')",message="spec.replication.ackTimeout applies only with durability Preferred: with Required a commit waits for a replica however long it takes",fieldPath=".ackTimeout"
type Replication struct {
	// Durability is Required or Preferred. Defaults to Required.
	// +kubebuilder:default=Required
	// +optional
	Durability Durability `json:"durability,omitempty"`

	// AckTimeout is how long a commit waits for a replica with durability Preferred, from 100ms
	// to 1h. Defaults to 10s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('100ms') && duration(self) <= duration('1h')",message="spec.replication.ackTimeout must be from 100ms to 1h"
	// +optional
	AckTimeout *metav1.Duration `json:"ackTimeout,omitempty"`

	// FailoverDelay is how long the primary must stay unanswering before a replica takes over,
	// from 0s to 5m: a longer delay rides out a short stall (a pause of the server, a brief
	// network fault) at the cost of a longer outage when the primary is truly gone. A primary
	// that restarted is replaced at once when it holds less than a replica. Defaults to 0s: a
	// failover about a second and a half after the primary stops answering.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('5m')",message="spec.replication.failoverDelay must be from 0s to 5m"
	// +optional
	FailoverDelay *metav1.Duration `json:"failoverDelay,omitempty"`
}

// DefaultAckTimeout is how long a commit waits for a replica with durability Preferred, unless
// the spec says otherwise.
const DefaultAckTimeout = 10 * time.Second

// SecretReference names a Secret in the resource's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// MySQLSpec is the MySQL server a user asks for.
// +kubebuilder:validation:XValidation:rule="!has(self.monitoring) || !has(self.monitoring.enabled) || !self.monitoring.enabled || !has(self.config) || !self.config.exists(l, l.contains('9104') && l.matches(r'(?i)^\\s*(loose[-_])?(mysqlx|admin|extra)[-_]port\\s*=\\s*\\D?0*9104(\\D|$)'))",message="spec.config must not set mysqlx_port, admin_port or extra_port to 9104 while spec.monitoring.enabled is true: the exporter serves its metrics on port 9104 of the same pod",fieldPath=".config"
// +kubebuilder:validation:XValidation:rule="!has(self.members) || self.members == 1 || !has(self.config) || !self.config.exists(l, l.matches('(?i)^[[:space:]]*(loose[-_])?((skip|enable|disable)[-_])?(server[-_]id|log[-_]bin|log[-_]basename|binlog[-_]format|log[-_]slave[-_]updates|log[-_]replica[-_]updates|sync[-_]binlog|innodb[-_]flush[-_]log[-_]at[-_]trx[-_]commit|gtid[-_][a-z_-]*|read[-_]only|slave[-_]net[-_]timeout|skip[-_]slave[-_]start|rpl[-_]semi[-_]sync[-_][a-z_-]*|init[-_]rpl[-_]role|wsrep[-_][a-z_-]*)[[:space:]]*([=#].*)?$'))",message="spec.config must not set server_id, binary log, GTID, read_only, semi-synchronous replication or wsrep options while spec.members is above 1: every member needs the operator's replication settings",fieldPath=".config"
type MySQLSpec struct {
	// Image is the MySQL server image. A newer version rolls the pod; an older major or minor
	// version is refused, because mysqld cannot start on data files written by a newer version.
	// The data volume records the newest version that ran on it. A tag that names no version
	// (latest, 8, a digest) cannot be checked: it is rolled out, the Progressing condition says the
	// guard could not check it, and the recorded version stays, so a later older version is still
	// refused. Defaults to mysql:8.4.6. At most 1024 characters.
	// +kubebuilder:default="mysql:8.4.6"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$') && [self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, [d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + (!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= 255)))",message="spec.image must be an image reference such as mysql:8.4.6 or registry:5000/team/mysql:8.4.6: [registry[:port]/]name[:tag][@digest], the name in lowercase and its path at most 255 characters: the name less its registry, as library/name for a Docker Hub name of one component"
	// +optional
	Image string `json:"image,omitempty"`

	// Storage is the data volume. It cannot change once the server exists.
	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage,omitempty"`

	// Members is the number of servers: one primary that takes the writes and replicas that hold
	// a copy of every write before it is acknowledged, so that a failover loses none. Members
	// above 1 need MariaDB (10.11 or later): the operator replicates with its GTIDs and
	// semi-synchronous replication. From 1 to 5. It may grow on a running MySQL, each new member
	// starting from a copy of a healthy one (a single server restarts once, with its binary log
	// on), and shrink to no fewer than 2, the highest members going once a member that stays holds
	// all they hold (the primary hands its role over first). Defaults to 1, one server.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Members int32 `json:"members,omitempty"`

	// Replication says how a cluster's primary waits for its replicas; it applies when members is
	// above 1.
	// +kubebuilder:default={}
	// +optional
	Replication Replication `json:"replication,omitempty"`

	// Resources of the mysqld container. Its memory limit, or request, sizes the server's memory
	// settings: see tuning.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Tuning sizes mysqld's buffer pool, max_connections, temporary tables and redo log from
	// spec.resources and the data volume.
	// +kubebuilder:default={}
	// +optional
	Tuning MySQLTuning `json:"tuning,omitempty"`

	// Database is created, empty, when the server first starts. It cannot be set, changed or
	// removed afterwards.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]{1,64}$`
	// +optional
	Database string `json:"database,omitempty"`

	// User is created when the server first starts, with all privileges on Database; its
	// password is the Secret's "password" key. It cannot be set, changed or removed afterwards.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]{1,32}$`
	// +kubebuilder:validation:XValidation:rule="self != 'root'",message="spec.user must not be root: the root account is always created"
	// +optional
	User string `json:"user,omitempty"`

	// CredentialsSecretRef names an existing Secret with the keys "root-password" and
	// "password". When unset, the operator generates a Secret with strong random passwords. The
	// server keeps the passwords it first started with, so the reference cannot be set, changed
	// or removed afterwards.
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`

	// Config lines added to the [mysqld] section of my.cnf, such as "max_connections=200". A
	// change restarts the server. Lines that set port, socket, bind-address, skip-networking,
	// datadir, user or init-file, in any of my.cnf's spellings, and !include or !includedir directives are
	// refused: the operator's Services, probes and data volume rely on them. While monitoring is
	// on, mysqlx_port, admin_port and extra_port cannot be 9104, the exporter's. At most 128 lines
	// of at most 1024 characters each.
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:XValidation:rule="!self.contains('\\n') && !self.trim().startsWith('[')",message="spec.config entries must be single my.cnf option lines, not sections"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('(?i)^[[:space:]]*(!include|(loose[-_])?((skip|enable|disable)[-_])?(port|socket|bind[-_]address|datadir|user|skip[-_]networking|networking|init[-_]file)[[:space:]]*([=#].*)?$)')",message="spec.config must not set port, socket, bind-address, skip-networking, datadir, user or init-file, nor include other files: the operator relies on them"
	// +listType=atomic
	// +optional
	Config []string `json:"config,omitempty"`

	// DeletionPolicy is what happens to the data volume and the generated credentials when the
	// MySQL is deleted: Retain keeps them for a MySQL of the same name to take over, Delete removes them.
	// Defaults to Retain.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// NodeSelector constrains the nodes the pod runs on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity of the pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Backup takes backups on a schedule and before every image change, keeps as many as the
	// retention says, and verifies them when asked.
	// +optional
	Backup *MySQLBackupPolicy `json:"backup,omitempty"`

	// Restore loads a backup into the server before it first starts. It cannot be set, changed or
	// removed afterwards.
	// +optional
	Restore *MySQLRestore `json:"restore,omitempty"`

	// Upgrade says how long a change of the pods may take and whether a failed one is rolled back.
	// +kubebuilder:default={}
	// +optional
	Upgrade UpgradePolicy `json:"upgrade,omitempty"`

	// Monitoring runs mysqld's Prometheus exporter in the pod. It connects as the account
	// appkeeper_exporter, from 127.0.0.1 only, with the privileges PROCESS, REPLICATION CLIENT and
	// SELECT; its password is in the Secret <name>-exporter-account, which is kept, with its
	// password, when monitoring is turned off.
	// +optional
	Monitoring Monitoring `json:"monitoring,omitempty"`
}

// MySQLStatus is what the operator observed of the MySQL server.
type MySQLStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Endpoint is host:port of the client Service.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// SecretName is the Secret holding the passwords.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// Image is the image the server runs, once a rollout to it has completed.
	// +optional
	Image string `json:"image,omitempty"`

	// DesiredReplicas is the number of server pods a MySQL runs: its members.
	// +optional
	DesiredReplicas int32 `json:"desiredReplicas,omitempty"`

	// ReadyReplicas is the number of members ready to serve.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Primary is the member that takes writes, and that the client Service reaches, in a MySQL of
	// more than one member. The operator records it before the member is opened to writes.
	// +optional
	Primary string `json:"primary,omitempty"`

	// Epoch counts the members made primary since the cluster began, the first included.
	// +optional
	Epoch int64 `json:"epoch,omitempty"`

	// Fork is the GTID position at which the current primary's history began: a member whose own
	// writes go beyond it holds transactions the cluster does not.
	// +optional
	Fork string `json:"fork,omitempty"`

	// LastSwitchover is the outcome of the last switchover asked for with the annotation
	// apps.appkeeper.dev/switchover.
	// +optional
	LastSwitchover *SwitchoverStatus `json:"lastSwitchover,omitempty"`

	// LastFailover is the last time a replica took over from a primary that failed.
	// +optional
	LastFailover *FailoverStatus `json:"lastFailover,omitempty"`

	// Members are the members of a MySQL of more than one, at most 5, as the operator last read
	// them.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Members []MySQLMemberStatus `json:"members,omitempty"`

	// Backup summarises the MySQL's backups.
	// +optional
	Backup *MySQLBackupStatusSummary `json:"backup,omitempty"`

	// PointInTimeRecovery says what the archive of the binary log can restore, as the primary's
	// shipper reports it; unset while spec.backup.pointInTimeRecovery is off.
	// +optional
	PointInTimeRecovery *PointInTimeRecoveryStatus `json:"pointInTimeRecovery,omitempty"`

	// Restore says what the data was restored from.
	// +optional
	Restore *MySQLRestoreStatus `json:"restore,omitempty"`

	// Tuning is what the operator computed from spec.resources and the data volume; unset when
	// spec.tuning.mode is Off.
	// +optional
	Tuning *TuningStatus `json:"tuning,omitempty"`

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

// LabelRole on a cluster member's pod says whether it is the primary or a replica, for the
// client and read Services to select; the operator sets it once the member plays that role.
const LabelRole = "apps.appkeeper.dev/role"

// Values of LabelRole.
const (
	RoleLabelPrimary = "primary"
	RoleLabelReplica = "replica"
)

// SwitchoverAnnotation on a MySQL cluster asks the operator to hand the primary's role to another
// member: its value names the member, or is "any" for the replica that holds the most. The operator
// removes the annotation as it takes the request, and records the outcome in
// status.lastSwitchover.
const SwitchoverAnnotation = "apps.appkeeper.dev/switchover"

// SwitchoverToAny asks for a switchover to whichever replica holds the most.
const SwitchoverToAny = "any"

// PromoteAnnotation on a MySQL cluster whose failover is blocked, because a replica that may hold
// the last acknowledged write cannot be read, tells the operator to promote the replica that holds
// the most of those it can read all the same: what only the unread replicas held is lost. Its value
// is free, for the person to say why. The operator removes it as it takes it; it refuses it, with
// a Warning Event, when no failover is blocked.
const PromoteAnnotation = "apps.appkeeper.dev/promote-accepting-data-loss"

// FailoverStatus is how a replica took over from a failed primary.
type FailoverStatus struct {
	// From is the primary that failed.
	From string `json:"from"`
	// To is the replica that took over.
	To string `json:"to"`
	// Reason says how the primary failed.
	Reason string `json:"reason"`
	// Detected is when the operator first found the primary failed.
	Detected metav1.Time `json:"detected"`
	// Writable is when the new primary was opened to writes.
	Writable metav1.Time `json:"writable"`
	// Duration is from Detected to Writable.
	Duration metav1.Duration `json:"duration"`
	// AcceptedDataLoss is true when a person asked for the promotion while a replica that may
	// have held the last acknowledged write could not be read.
	// +optional
	AcceptedDataLoss bool `json:"acceptedDataLoss,omitempty"`
}

// Outcomes of a switchover.
const (
	SwitchoverDone    = "Done"
	SwitchoverRefused = "Refused"
)

// SwitchoverStatus is the outcome of a switchover request.
type SwitchoverStatus struct {
	// Requested is the member the request named, or "any".
	Requested string `json:"requested"`
	// From is the primary before the switchover.
	// +optional
	From string `json:"from,omitempty"`
	// To is the primary after it: the same as From when the request was refused.
	// +optional
	To string `json:"to,omitempty"`
	// Result is Done or Refused.
	Result string `json:"result"`
	// Message says how long writes were closed, or why the request was refused.
	Message string `json:"message"`
	// Time is when the operator handled the request.
	Time metav1.Time `json:"time"`
}

// MemberRole is what a member does in its cluster.
type MemberRole string

const (
	// RolePrimary takes writes.
	RolePrimary MemberRole = "Primary"
	// RoleReplica applies the primary's writes, and acknowledges them.
	RoleReplica MemberRole = "Replica"
	// RoleUnknown could not be read.
	RoleUnknown MemberRole = "Unknown"
)

// MySQLMemberStatus is one member of a cluster as the operator last read it over SQL.
type MySQLMemberStatus struct {
	// Name of the member's pod.
	Name string `json:"name"`
	// Role is Primary, Replica or Unknown.
	Role MemberRole `json:"role"`
	// Position is the last transaction the member holds, as a MariaDB GTID list.
	// +optional
	Position string `json:"position,omitempty"`
	// LagSeconds is how far a replica's applying is behind its primary, when it replicates.
	// +optional
	LagSeconds *int64 `json:"lagSeconds,omitempty"`
	// Message says what is wrong with the member, if anything: why it could not be read, or its
	// replication error.
	// +optional
	Message string `json:"message,omitempty"`
	// Ready is its pod's Ready condition.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// Errant is true for a member that holds writes its primary's history does not: it is left
	// out of replication and rebuilt from a copy of a healthy member.
	// +optional
	Errant bool `json:"errant,omitempty"`
	// AcknowledgingReplicas is, on the primary, how many replicas are connected that acknowledge
	// its commits.
	// +optional
	AcknowledgingReplicas *int32 `json:"acknowledgingReplicas,omitempty"`
	// CommitsAlone is true on a primary that returns commits without waiting for a replica: with
	// durability Preferred, once none acknowledged within ackTimeout, until one catches up.
	// +optional
	CommitsAlone bool `json:"commitsAlone,omitempty"`
}

// MySQL runs a MySQL server on a persistent volume.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=my,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 52",message="metadata.name must be a DNS-1035 label of at most 52 characters: it names the StatefulSet, its pod and the Services"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredReplicas`
// +kubebuilder:printcolumn:name="Ready-Pods",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.image`
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.primary`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.rollout.currentRevision`,priority=1
// +kubebuilder:printcolumn:name="Desired-Revision",type=string,JSONPath=`.status.rollout.updateRevision`,priority=1
// +kubebuilder:printcolumn:name="Rollbacks",type=integer,JSONPath=`.status.rollout.rollbacks`,priority=1
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,priority=1
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
type MySQL struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The rules on fixed fields sit on spec: a rule on an optional field does not run when the
	// field is added or removed, and MySQLSpec is shared by a WordPress's inline MySQL, whose
	// errors name other fields.

	// Spec is the MySQL server a user asks for. Database, user, credentialsSecretRef and storage
	// take effect when the server first starts: they cannot be set, changed or removed afterwards.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="has(self.database) == has(oldSelf.database) && (!has(self.database) || self.database == oldSelf.database)",message="spec.database is immutable: it is created when the server first starts",fieldPath=".database"
	// +kubebuilder:validation:XValidation:rule="has(self.user) == has(oldSelf.user) && (!has(self.user) || self.user == oldSelf.user)",message="spec.user is immutable: it is created when the server first starts",fieldPath=".user"
	// +kubebuilder:validation:XValidation:rule="has(self.credentialsSecretRef) == has(oldSelf.credentialsSecretRef) && (!has(self.credentialsSecretRef) || self.credentialsSecretRef == oldSelf.credentialsSecretRef)",message="spec.credentialsSecretRef is immutable: the server keeps the passwords it first started with",fieldPath=".credentialsSecretRef"
	// +kubebuilder:validation:XValidation:rule="has(self.storage) == has(oldSelf.storage) && (!has(self.storage) || self.storage == oldSelf.storage)",message="spec.storage is immutable: the data volume is created once",fieldPath=".storage"
	// +kubebuilder:validation:XValidation:rule="(has(oldSelf.members) ? oldSelf.members : 1) == 1 || (has(self.members) ? self.members : 1) >= 2",message="spec.members cannot go back to 1 once the MySQL is a cluster: its members keep the binary log and replication settings; 2 is the fewest",fieldPath=".members"
	// +kubebuilder:validation:XValidation:rule="has(self.restore) == has(oldSelf.restore) && (!has(self.restore) || self.restore == oldSelf.restore)",message="spec.restore is immutable: the data is restored once, before the server first starts",fieldPath=".restore"
	Spec MySQLSpec `json:"spec,omitempty"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that judge health from it (kstatus)
	// see a new resource as not yet observed rather than as healthy.
	// +kubebuilder:default={observedGeneration: 0}
	Status MySQLStatus `json:"status,omitempty"`
}

// MySQLList is a list of MySQLs.
// +kubebuilder:object:root=true
type MySQLList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MySQL `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQL{}, &MySQLList{})
}

// MaxMySQLNameLength bounds metadata.name: the StatefulSet's revisions are labelled
// <ChildName>-<10-character hash>, a label value of at most 63 characters, and the Services are
// named after the MySQL.
const MaxMySQLNameLength = 52

// ChildName is the name of the StatefulSet and of the client Service.
func (m *MySQL) ChildName() string { return m.Name }

// HeadlessServiceName is the StatefulSet's governing Service.
func (m *MySQL) HeadlessServiceName() string { return m.Name + "-headless" }

// BackupAccountSecretName holds the password of the account backups connect as, and the SQL
// that creates that account each time the server starts.
func (m *MySQL) BackupAccountSecretName() string { return m.Name + "-backup-account" }

// BinlogArchiveKey is the root of the MySQL's binary log archive in a storage:
// <prefix><namespace>/<name>/binlog/<uid>, so that a new MySQL of the same name, whose
// transactions start again from the first, never joins an earlier one's archive.
func (m *MySQL) BinlogArchiveKey(storage BackupStorage) string {
	return storage.KeyPrefix() + m.Namespace + "/" + m.Name + "/binlog/" + string(m.UID)
}

// ExporterAccountSecretName holds the password of the account the metrics exporter connects as,
// in the option file the exporter reads.
func (m *MySQL) ExporterAccountSecretName() string { return m.Name + "-exporter-account" }

// PrimaryBudgetName is the name of the PodDisruptionBudget that holds a cluster's primary until the
// operator has switched over from its node.
func (m *MySQL) PrimaryBudgetName() string { return m.Name + "-primary" }

// ReadServiceName is the Service that reaches the replicas of a cluster.
func (m *MySQL) ReadServiceName() string { return m.Name + "-read" }

// ClusterAccountSecretName holds the password of the account the operator manages a cluster's
// replication with, and replicas replicate with.
func (m *MySQL) ClusterAccountSecretName() string { return m.Name + "-cluster-account" }

// SeedPlanName is the ConfigMap that tells a cluster's members which member to copy their data
// from when they have none, and which of them are to be rebuilt.
func (m *MySQL) SeedPlanName() string { return m.Name + "-seed" }

// Clustered tells whether the MySQL runs more than one member.
func (m *MySQL) Clustered() bool { return m.MemberCount() > 1 }

// MemberCount is the number of members the spec asks for.
func (m *MySQL) MemberCount() int32 { return max(m.Spec.Members, 1) }

// MemberName is the name of the pod of the member with ordinal i.
func (m *MySQL) MemberName(i int32) string { return fmt.Sprintf("%s-%d", m.ChildName(), i) }

// AckTimeout is how long a cluster's primary waits for a replica's acknowledgement; zero means
// as long as it takes.
func (m *MySQL) AckTimeout() time.Duration {
	if m.Spec.Replication.Durability != DurabilityPreferred {
		return 0
	}
	if t := m.Spec.Replication.AckTimeout; t != nil {
		return t.Duration
	}
	return DefaultAckTimeout
}

// FailoverDelay is how long a cluster's primary must stay unanswering before a replica takes over.
func (m *MySQL) FailoverDelay() time.Duration {
	if d := m.Spec.Replication.FailoverDelay; d != nil {
		return d.Duration
	}
	return 0
}

// ConfigMapName holds my.cnf.
func (m *MySQL) ConfigMapName() string { return m.Name + "-config" }

// GeneratedSecretName is the Secret the operator generates when no Secret is referenced.
func (m *MySQL) GeneratedSecretName() string { return m.Name + "-credentials" }

// SecretName is the Secret that holds the passwords.
func (m *MySQL) SecretName() string {
	if m.Spec.CredentialsSecretRef != nil {
		return m.Spec.CredentialsSecretRef.Name
	}
	return m.GeneratedSecretName()
}

// DataClaimName is the PVC the StatefulSet makes for the data volume of its first member.
func (m *MySQL) DataClaimName() string { return "data-" + m.ChildName() + "-0" }

// DataClaimNames are the PVCs of every member's data volume, the first member's first.
func (m *MySQL) DataClaimNames() []string {
	names := make([]string, m.MemberCount())
	for i := range names {
		names[i] = fmt.Sprintf("data-%s-%d", m.ChildName(), i)
	}
	return names
}

// MemberHost is the in-cluster DNS name of a cluster member's pod, through the headless Service.
func (m *MySQL) MemberHost(member string) string {
	return fmt.Sprintf("%s.%s.%s.svc", member, m.HeadlessServiceName(), m.Namespace)
}

// Host is the in-cluster DNS name of the client Service.
func (m *MySQL) Host() string { return fmt.Sprintf("%s.%s.svc", m.ChildName(), m.Namespace) }

// Endpoint is host:port of the client Service.
func (m *MySQL) Endpoint() string { return fmt.Sprintf("%s:%d", m.Host(), MySQLPort) }

// MonitoringEnabled tells whether the spec asks for the exporter, and so for a PodMonitor.
func (m *MySQL) MonitoringEnabled() bool { return m.Spec.Monitoring.Enabled }

// SelectorLabels select this MySQL's pod and no others.
func (m *MySQL) SelectorLabels() map[string]string {
	return map[string]string{LabelName: MySQLAppName, LabelInstance: m.Name}
}

// RetainsData is true unless the spec asks for the data to go with the MySQL.
func (m *MySQL) RetainsData() bool { return m.Spec.DeletionPolicy != DeletionPolicyDelete }

// ImageVersion is the major and minor version an image's tag names, such as 8 and 4 for
// mysql:8.4.6 or registry:5000/mysql:8.4-oracle; ok is false for an image that is no valid
// reference, or whose tag names no major.minor version (latest, 8, a digest alone).
func ImageVersion(image string) (major, minor uint64, ok bool) {
	ref, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return 0, 0, false
	}
	tagged, isTagged := ref.(reference.Tagged)
	if !isTagged {
		return 0, 0, false
	}
	version, err := semver.NewVersion(tagged.Tag())
	if err != nil || !namesMinor(tagged.Tag()) {
		return 0, 0, false
	}
	return version.Major(), version.Minor(), true
}

// namesMinor tells whether a version tag names its minor version. semver reads the tag 8 as 8.0.0,
// but that tag follows the newest 8.x release, whose minor nothing here knows.
func namesMinor(tag string) bool {
	core, _, _ := strings.Cut(tag, "-")
	core, _, _ = strings.Cut(core, "+")
	return strings.Contains(core, ".")
}

// InstanceStatus is the status the shared reconcile pass compares and writes, with its conditions
// and rollout.
func (m *MySQL) InstanceStatus() (status any, conditions []metav1.Condition, rollout RolloutStatus) {
	return m.Status, m.Status.Conditions, m.Status.Rollout
}
