package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MySQLBackupAppName is the app.kubernetes.io/name label of a MySQLBackup's Jobs.
const MySQLBackupAppName = "mysqlbackup"

// LabelMySQL on a MySQLBackup names the MySQL it backs up, so that a MySQL's backups are listed
// by label whether or not the MySQL owns them.
const LabelMySQL = "apps.appkeeper.dev/mysql"

// AnnotationBackupReason on a MySQLBackup the operator creates says why: Scheduled, PreUpgrade
// or PointInTimeBase.
const AnnotationBackupReason = "apps.appkeeper.dev/backup-reason"

// AnnotationBackupEpoch on a MySQLBackup the operator creates is the MySQL's status.epoch when it
// was asked for: a cluster's backup taken after the last promotion has a larger one.
const AnnotationBackupEpoch = "apps.appkeeper.dev/epoch"

// Why a MySQLBackup was taken.
const (
	BackupReasonOnDemand   = "OnDemand"
	BackupReasonScheduled  = "Scheduled"
	BackupReasonPreUpgrade = "PreUpgrade"
	// BackupReasonPointInTimeBase: a base for the binary log archive to replay from, taken when
	// it has none or after a promotion.
	BackupReasonPointInTimeBase = "PointInTimeBase"
)

// BackupPhase is where a backup stands.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type BackupPhase string

const (
	// BackupPending: the backup waits for its MySQL to be Available.
	BackupPending BackupPhase = "Pending"
	// BackupRunning: the backup Job runs.
	BackupRunning BackupPhase = "Running"
	// BackupSucceeded: the artifact and its manifest are in the storage.
	BackupSucceeded BackupPhase = "Succeeded"
	// BackupFailed: the Job failed every attempt; no artifact counts as this backup.
	BackupFailed BackupPhase = "Failed"
)

// VerificationResult is the outcome of restoring a backup into a scratch server.
// +kubebuilder:validation:Enum=Verified;Failed
type VerificationResult string

const (
	// VerificationPassed: every table restored with the row count and checksum of the backup.
	VerificationPassed VerificationResult = "Verified"
	// VerificationFailed: the artifact is corrupt, or a table differs.
	VerificationFailed VerificationResult = "Failed"
)

// Condition types of a MySQLBackup.
const (
	// ConditionComplete is True once the backup succeeded, False once it failed.
	ConditionComplete = "Complete"
	// ConditionVerified is True once a restore of the backup matched it, False once it did not.
	ConditionVerified = "Verified"
)

// Reasons of a MySQLBackup's conditions and Events.
const (
	ReasonBackupSucceeded        = "BackupSucceeded"
	ReasonBackupFailed           = "BackupFailed"
	ReasonBackupRunning          = "BackupRunning"
	ReasonWaitingForMySQL        = "WaitingForMySQL"
	ReasonVerificationPassed     = "VerificationPassed"
	ReasonVerificationFailed     = "VerificationFailed"
	ReasonVerificationRunning    = "VerificationRunning"
	ReasonBackupPruned           = "BackupPruned"
	ReasonRestoring              = "Restoring"
	ReasonRestored               = "Restored"
	ReasonRestoreSourceNotReady  = "RestoreSourceNotReady"
	ReasonWaitingForBackup       = "WaitingForPreUpgradeBackup"
	ReasonPreUpgradeBackupFailed = "PreUpgradeBackupFailed"
)

// MySQLBackupSpec is one backup of a MySQL.
type MySQLBackupSpec struct {
	// MySQLName names the MySQL in the same namespace to back up; at most 63 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	MySQLName string `json:"mysqlName"`

	// Storage holds the artifact. When unset, the MySQL's spec.backup.storage.
	// +optional
	Storage *BackupStorage `json:"storage,omitempty"`

	// Encryption of the artifact. When storage is unset, the MySQL's spec.backup.encryption.
	// +optional
	Encryption *BackupEncryption `json:"encryption,omitempty"`

	// Verify restores the backup into a scratch server once it succeeded and compares every
	// table's row count and checksum. When storage is unset, the MySQL's spec.backup.verify.
	// +optional
	Verify *bool `json:"verify,omitempty"`
}

// MySQLBackupStatus is what the operator observed of the backup.
type MySQLBackupStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// Reason the backup was taken: OnDemand, Scheduled or PreUpgrade.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Member is the member of a MySQL cluster the dump read: a replica in step with its primary
	// when there is one, so that the primary's clients do not share it with the dump; empty when
	// the dump read the primary through the client Service.
	// +optional
	Member string `json:"member,omitempty"`

	// StartTime is when the backup Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the backup succeeded or finally failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Location is where the backup is written: the storage, the key (the artifact is
	// <key>.sql.gz, or <key>.sql.gz.age when encrypted; its manifest of tables, row counts and
	// checksums is <key>.json) and the encryption. A restore reads it from here.
	// +optional
	Location *BackupLocation `json:"location,omitempty"`

	// Size of the artifact in bytes, as stored (compressed, and encrypted when asked).
	// +optional
	Size int64 `json:"size,omitempty"`

	// SHA256 of the artifact as stored, in hex.
	// +optional
	SHA256 string `json:"sha256,omitempty"`

	// Encrypted is true when the artifact is encrypted.
	// +optional
	Encrypted bool `json:"encrypted,omitempty"`

	// ServerVersion is the version the server reported at the dump.
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`

	// BinlogPosition is the binary log file and position at the dump ("file:position"), empty when
	// the server keeps no binary log.
	// +optional
	BinlogPosition string `json:"binlogPosition,omitempty"`

	// GTIDPosition is MariaDB's @@gtid_binlog_pos at the dump: the transactions the backup holds,
	// after which a restore to a point in time replays the archived binary log.
	// +optional
	GTIDPosition string `json:"gtidPosition,omitempty"`

	// Databases counts the databases the backup holds.
	// +optional
	Databases int32 `json:"databases,omitempty"`

	// Tables counts the tables the backup holds, over all its databases; verification compares
	// each one's row count and checksum.
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// Attempts counts the backup Job's failed attempts.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`

	// Verification is the outcome of restoring the backup into a scratch server.
	// +optional
	Verification VerificationResult `json:"verification,omitempty"`

	// VerificationTime is when the verification ended.
	// +optional
	VerificationTime *metav1.Time `json:"verificationTime,omitempty"`

	// Conditions are Complete and Verified, summarised as Ready and Stalled: Ready once the backup
	// succeeded and, when verification was asked for, passed it; Stalled once it or its
	// verification failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MySQLBackup is one logical backup of a MySQL, taken by a Job and kept in object storage or a
// volume. Deleting it leaves its artifact in the storage; only a MySQL's retention deletes artifacts.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mybak,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 56",message="metadata.name must be a DNS-1035 label of at most 56 characters: it names the backup's Jobs"
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Trigger",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.verification`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.status.location.key`,priority=1
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.status.serverVersion`,priority=1
type MySQLBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the backup a user asks for; it cannot change once the backup exists.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a backup is taken once"
	Spec MySQLBackupSpec `json:"spec"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that
	// judge health from it (kstatus) see a new backup as not yet observed rather than as done.
	// +kubebuilder:default={observedGeneration: 0}
	Status MySQLBackupStatus `json:"status,omitempty"`
}

// MySQLBackupList is a list of MySQLBackups.
// +kubebuilder:object:root=true
type MySQLBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MySQLBackup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQLBackup{}, &MySQLBackupList{})
}

// MaxMySQLBackupNameLength bounds metadata.name: the Jobs are named <name>-backup and
// <name>-verify, and a Job's name is a label value of its pods, at most 63 characters.
const MaxMySQLBackupNameLength = 56

// JobName is the name of the Job that takes the backup.
func (b *MySQLBackup) JobName() string { return b.Name + "-backup" }

// VerifyJobName is the name of the Job that restores the backup into a scratch server.
func (b *MySQLBackup) VerifyJobName() string { return b.Name + "-verify" }

// Key is the key of the backup's artifact in a storage: <prefix><namespace>/<mysql>/<backup>.
func (b *MySQLBackup) Key(storage BackupStorage) string {
	return storage.KeyPrefix() + b.Namespace + "/" + b.Spec.MySQLName + "/" + b.Name
}

// KeyPrefix is the prefix of every key in the storage.
func (s BackupStorage) KeyPrefix() string {
	switch {
	case s.S3 != nil:
		return withSlash(s.S3.Prefix)
	case s.Volume != nil:
		return withSlash(s.Volume.Path)
	}
	return ""
}

// Describe names the storage as status.location.storage does: s3://<bucket> or pvc://<claim>.
func (s BackupStorage) Describe() string {
	switch {
	case s.S3 != nil:
		return "s3://" + s.S3.Bucket
	case s.Volume != nil:
		return "pvc://" + s.Volume.ClaimName
	}
	return ""
}

func withSlash(prefix string) string {
	if prefix == "" || prefix[len(prefix)-1] == '/' {
		return prefix
	}
	return prefix + "/"
}
