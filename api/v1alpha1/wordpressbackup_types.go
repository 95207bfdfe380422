package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WordPressBackupAppName is the app.kubernetes.io/name label of a WordPressBackup's Jobs.
const WordPressBackupAppName = "wordpressbackup"

// WordPressBackupSpec is one restore point of a WordPress site: its database and its wp-content.
type WordPressBackupSpec struct {
	// WordPressName names the WordPress in the same namespace to back up; at most 63 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	WordPressName string `json:"wordpressName"`

	// Storage holds the database dump and the wp-content archive. When unset, the spec.backup.storage
	// of the site's MySQL.
	// +optional
	Storage *BackupStorage `json:"storage,omitempty"`

	// Encryption of both artifacts. When storage is unset, the spec.backup.encryption of the
	// site's MySQL.
	// +optional
	Encryption *BackupEncryption `json:"encryption,omitempty"`

	// Verify restores the database dump into a scratch server and compares every table.
	// +optional
	Verify bool `json:"verify,omitempty"`
}

// WordPressContentBackup is the archive of a site's wp-content.
type WordPressContentBackup struct {
	// Location of the archive: <key>.content.tar.gz (.age when encrypted), and its manifest
	// <key>.content.json.
	Location BackupLocation `json:"location"`

	// Size of the archive in bytes, as stored.
	// +optional
	Size int64 `json:"size,omitempty"`

	// SHA256 of the archive as stored, in hex.
	// +optional
	SHA256 string `json:"sha256,omitempty"`

	// Files counts the files the archive holds.
	// +optional
	Files int64 `json:"files,omitempty"`

	// Bytes is the size of those files before compression, in bytes.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
}

// WordPressBackupStatus is what the operator observed of the restore point.
type WordPressBackupStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending, Running, Succeeded (both halves are stored) or Failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// StartTime is when the backup started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when both halves succeeded, or one finally failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// DatabaseBackup names the MySQLBackup that holds the database dump.
	// +optional
	DatabaseBackup string `json:"databaseBackup,omitempty"`

	// Content is the wp-content archive, once stored.
	// +optional
	Content *WordPressContentBackup `json:"content,omitempty"`

	// Conditions: Complete, and with spec.verify Verified, the verdict on the database dump that
	// its MySQLBackup gives; summarised as Ready and Stalled as a MySQLBackup's are.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WordPressBackup is a restore point of a WordPress site: a MySQLBackup of its database and an
// archive of its wp-content volume, taken together. A new WordPress created with spec.restore
// naming it serves the same posts and uploads. Deleting it leaves both artifacts in the storage.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wpbak,categories=appkeeper
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 52",message="metadata.name must be a DNS-1035 label of at most 52 characters: it names the site's MySQLBackup and the Jobs"
// +kubebuilder:printcolumn:name="WordPress",type=string,JSONPath=`.spec.wordpressName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.status.databaseBackup`
// +kubebuilder:printcolumn:name="Files",type=integer,JSONPath=`.status.content.files`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WordPressBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the restore point a user asks for; it cannot change once it exists.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a backup is taken once"
	Spec WordPressBackupSpec `json:"spec"`
	// Status is what the operator observed. Defaults to observedGeneration 0, so that tools that
	// judge health from it (kstatus) see a new restore point as not yet observed rather than as done.
	// +kubebuilder:default={observedGeneration: 0}
	Status WordPressBackupStatus `json:"status,omitempty"`
}

// WordPressBackupList is a list of WordPressBackups.
// +kubebuilder:object:root=true
type WordPressBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WordPressBackup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WordPressBackup{}, &WordPressBackupList{})
}

// MaxWordPressBackupNameLength bounds metadata.name: the database's MySQLBackup is <name>-db, at
// most 56 characters.
const MaxWordPressBackupNameLength = 52

// DatabaseBackupName is the MySQLBackup of the site's database.
func (b *WordPressBackup) DatabaseBackupName() string { return DatabaseBackupName(b.Name) }

// DatabaseBackupName is the MySQLBackup of the database of the WordPressBackup named backup.
func DatabaseBackupName(backup string) string { return backup + "-db" }

// ContentJobName is the Job that archives wp-content.
func (b *WordPressBackup) ContentJobName() string { return b.Name + "-content" }

// Key is the key of the wp-content archive in a storage: <prefix><namespace>/<wordpress>/<backup>.
func (b *WordPressBackup) Key(storage BackupStorage) string {
	return storage.KeyPrefix() + b.Namespace + "/" + b.Spec.WordPressName + "/" + b.Name
}

// WordPressRestore is the restore point a new WordPress starts from.
type WordPressRestore struct {
	// BackupName names a WordPressBackup in the namespace that succeeded. The site's own MySQL
	// loads its database dump, and wp-content is filled from its archive before the first pod starts.
	// +kubebuilder:validation:MinLength=1
	BackupName string `json:"backupName"`
}

// RestoreJobName is the Job that fills wp-content from a restore point.
func (wp *WordPress) RestoreJobName() string { return wp.Name + "-restore" }
