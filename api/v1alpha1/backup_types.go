package v1alpha1

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of a backup storage credentials Secret: an S3 access key pair.
const (
	SecretKeyAccessKeyID     = "access-key-id"
	SecretKeySecretAccessKey = "secret-access-key"
)

// BackupStorage is where backup artifacts are kept: an S3-compatible bucket or a volume claim.
// Exactly one of s3 and volume is set.
// +kubebuilder:validation:XValidation:rule="has(self.s3) != has(self.volume)",message="backup storage must set exactly one of s3 and volume"
type BackupStorage struct {
	// S3 is a bucket of an S3-compatible object store.
	// +optional
	S3 *S3Storage `json:"s3,omitempty"`

	// Volume is a PersistentVolumeClaim in the namespace. The backup Job mounts it, so it must be
	// mountable from the node the Job runs on (ReadWriteMany, or ReadWriteOnce on a single node).
	// +optional
	Volume *VolumeStorage `json:"volume,omitempty"`
}

// S3Storage is a bucket of an S3-compatible object store.
type S3Storage struct {
	// Endpoint is the URL of the object store, such as https://s3.eu-west-1.amazonaws.com or
	// http://versitygw.storage.svc:7070; at most 2048 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/[:space:]]+(/.*)?$')",message="s3.endpoint must be an http:// or https:// URL"
	Endpoint string `json:"endpoint"`

	// Bucket holds the artifacts; it must exist. A bucket name of 3 to 63 characters.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	Bucket string `json:"bucket"`

	// Prefix of every key the backups write, such as "prod/". Keys are
	// <prefix><namespace>/<mysql>/<backup>. At most 512 characters.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="s3.prefix must not start with / nor contain .."
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// Region of the bucket. Defaults to us-east-1.
	// +kubebuilder:default="us-east-1"
	// +kubebuilder:validation:MinLength=1
	// +optional
	Region string `json:"region,omitempty"`

	// ForcePathStyle addresses the bucket in the path (http://host/bucket/key) rather than in the
	// host name; most self-hosted object stores need it.
	// +optional
	ForcePathStyle bool `json:"forcePathStyle,omitempty"`

	// CredentialsSecretRef names a Secret with the keys "access-key-id" and "secret-access-key".
	CredentialsSecretRef SecretReference `json:"credentialsSecretRef"`

	// CASecretRef names a Secret whose "ca.crt" is the certificate authority of an https endpoint
	// the system's roots do not know.
	// +optional
	CASecretRef *SecretReference `json:"caSecretRef,omitempty"`
}

// VolumeStorage is a PersistentVolumeClaim that holds artifacts as files.
type VolumeStorage struct {
	// ClaimName names the PersistentVolumeClaim, in the backup's namespace; at most 253 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClaimName string `json:"claimName"`

	// Path is the folder in the volume, such as "backups/"; files are
	// <path><namespace>/<mysql>/<backup>. At most 512 characters.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="volume.path must not start with / nor contain .."
	// +optional
	Path string `json:"path,omitempty"`
}

// BackupEncryption encrypts artifacts on the client side, before they leave the Job, with a
// passphrase (age's scrypt recipient). The passphrase never appears in a log, an Event or a status;
// losing it makes the backups unreadable.
type BackupEncryption struct {
	// KeySecretRef names the Secret and key holding the passphrase.
	KeySecretRef SecretKeyReference `json:"keySecretRef"`
}

// SecretKeyReference names one key of a Secret in the resource's namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Key in the Secret.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// BackupLocation is where one backup's artifact is kept: a storage and the key of the artifact in
// it, without the extensions the backup adds.
type BackupLocation struct {
	// Storage holds the artifact.
	Storage BackupStorage `json:"storage"`

	// Key of the backup in the storage, as a MySQLBackup's status.location.key reports it, such as
	// "prod/shop/db/db-20261123-0200". At most 1024 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="key must not start with / nor contain .."
	Key string `json:"key"`

	// Encryption is the passphrase the backup was encrypted with, if it was.
	// +optional
	Encryption *BackupEncryption `json:"encryption,omitempty"`
}

// BackupRetention says which scheduled backups are deleted, artifacts included. The newest backup
// that succeeded (and, with verification on, passed it) is never deleted.
// +kubebuilder:validation:XValidation:rule="has(self.keepLast) || has(self.maxAge)",message="backup retention must set keepLast, maxAge or both"
type BackupRetention struct {
	// KeepLast keeps this many of the newest successful backups, 1 to 1000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`

	// MaxAge deletes backups older than this, such as "720h" for 30 days.
	// +optional
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
}

// MySQLBackupPolicy backs a MySQL up on a schedule, before every image change, and verifies the
// backups it takes.
type MySQLBackupPolicy struct {
	// Schedule in cron format ("0 2 * * *" is 02:00 every day) in TimeZone; at most 128 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`

	// TimeZone of the schedule, an IANA name such as "Europe/Paris" of at most 64 characters; UTC
	// when unset.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// Suspend stops scheduled backups; backups before an image change are still taken.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Storage holds the artifacts.
	Storage BackupStorage `json:"storage"`

	// Encryption of the artifacts; none when unset.
	// +optional
	Encryption *BackupEncryption `json:"encryption,omitempty"`

	// Retention of scheduled backups; all are kept when unset.
	// +optional
	Retention *BackupRetention `json:"retention,omitempty"`

	// Verify restores each scheduled backup into a scratch server and compares every table's row
	// count and checksum with those recorded when the backup was taken.
	// +optional
	Verify bool `json:"verify,omitempty"`

	// PointInTimeRecovery ships the server's binary log to the storage as it grows, so that a new
	// MySQL can start from a backup and the transactions committed after it, up to any second
	// (spec.restore.pointInTime).
	// +optional
	PointInTimeRecovery *PointInTimeRecovery `json:"pointInTimeRecovery,omitempty"`
}

// PointInTimeRecovery archives the binary log beside the backups. It needs MariaDB (10.11 or
// later), whose GTIDs order the archive across failovers.
type PointInTimeRecovery struct {
	// Enabled ships every transaction to the storage within seconds of its commit, from the
	// primary, in pieces sealed with the backups' encryption when it is set. The archive of a
	// MySQL is kept under <prefix><namespace>/<mysql>/binlog/<uid>. Turning it on for a MySQL of
	// one member restarts the server once, with its binary log on.
	Enabled bool `json:"enabled"`
}

// PointInTimeRecoveryStatus is the window a restore to a point in time can reach, and how far
// the archive is behind.
type PointInTimeRecoveryStatus struct {
	// Member is the member whose shipper ships: the primary.
	// +optional
	Member string `json:"member,omitempty"`

	// RecoverableFrom is the earliest instant a restore can reach: when the oldest backup that the
	// archive follows without a gap, RecoverableFromBackup, completed. Unset while there is none.
	// +optional
	RecoverableFrom *metav1.Time `json:"recoverableFrom,omitempty"`

	// RecoverableFromBackup names that backup, the base of a restore to RecoverableFrom.
	// +optional
	RecoverableFromBackup string `json:"recoverableFromBackup,omitempty"`

	// RecoverableTo is when the newest archived transaction, LastArchivedGTID, committed: a
	// restore can reach the second after it.
	// +optional
	RecoverableTo *metav1.Time `json:"recoverableTo,omitempty"`

	// LastArchivedGTID names the newest transaction in the archive.
	// +optional
	LastArchivedGTID string `json:"lastArchivedGTID,omitempty"`

	// LagSeconds is how long a committed transaction may have waited to be shipped: 0 while the
	// shipper keeps up (it found every committed transaction shipped within the last 5 seconds).
	// +optional
	LagSeconds int64 `json:"lagSeconds,omitempty"`

	// Message says why the archive cannot restore, or could not be read; empty when it can.
	// +optional
	Message string `json:"message,omitempty"`
}

// PointInTimeTarget is where a restore's replay of the archived binary log stops: an instant or
// a transaction. Exactly one of time and gtid is set.
// +kubebuilder:validation:XValidation:rule="has(self.time) != has(self.gtid)",message="spec.restore.pointInTime must set exactly one of time and gtid"
type PointInTimeTarget struct {
	// Time restores the database as it was at this instant, given to the second in RFC 3339
	// (2026-11-27T10:41:59Z): every transaction committed before it, none committed at it or
	// after. It must lie between the backup and the archive's newest transaction.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`

	// GTID names the last transaction replayed, such as 0-1-1234 (domain-server-sequence), as
	// @@last_gtid or the binary log shows it.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}-[0-9]{1,10}-[0-9]{1,20}$`
	// +optional
	GTID string `json:"gtid,omitempty"`
}

// KeepsBeside tells whether a backup written to storage (nil: the policy's own) lies in the
// policy's storage, beside the binary log archive, where a replay after it finds the archive.
func (p *MySQLBackupPolicy) KeepsBeside(storage *BackupStorage) bool {
	return p != nil && (storage == nil || reflect.DeepEqual(*storage, p.Storage))
}

// PointInTimeRecoveryEnabled tells whether p ships the binary log.
func (p *MySQLBackupPolicy) PointInTimeRecoveryEnabled() bool {
	return p != nil && p.PointInTimeRecovery != nil && p.PointInTimeRecovery.Enabled
}

// MySQLRestore is the backup a new MySQL starts from: its data is loaded before the server first
// accepts connections. The accounts are the new MySQL's own: root and spec.user get the new
// credentials, and the backup's databases are loaded under them.
// +kubebuilder:validation:XValidation:rule="[has(self.backupName), has(self.location), has(self.mysqlName)].filter(x, x).size() == 1",message="spec.restore must set exactly one of backupName, location and mysqlName"
// +kubebuilder:validation:XValidation:rule="!has(self.mysqlName) || has(self.pointInTime)",message="spec.restore.mysqlName needs spec.restore.pointInTime: the newest backup of that MySQL before the target is the base"
type MySQLRestore struct {
	// BackupName names a MySQLBackup in the namespace that succeeded.
	// +kubebuilder:validation:MinLength=1
	// +optional
	BackupName string `json:"backupName,omitempty"`

	// Location of a backup's artifact in a storage, for a backup whose MySQLBackup is gone.
	// +optional
	Location *BackupLocation `json:"location,omitempty"`

	// MySQLName names a MySQL in the namespace, or one that is gone whose MySQLBackups remain,
	// whose newest backup before spec.restore.pointInTime is the base: it succeeded, was taken
	// with the binary log archived, into the storage of spec.backup. At most 63 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	MySQLName string `json:"mysqlName,omitempty"`

	// PointInTime replays, after the backup, the transactions its MySQL archived with
	// spec.backup.pointInTimeRecovery, up to an instant or a transaction. The backup must have
	// been taken while the archive was on. A target outside what the archive holds fails the
	// restore before the server holds any data, naming the window it can restore.
	// +optional
	PointInTime *PointInTimeTarget `json:"pointInTime,omitempty"`
}

// MySQLBackupStatusSummary is what a MySQL's status says of its backups.
type MySQLBackupStatusSummary struct {
	// LastScheduleTime is when the last scheduled backup was started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// NextScheduleTime is when the next scheduled backup starts.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// MissedSchedules counts the scheduled times that passed without a backup being started, such
	// as while the operator was down; only the latest missed one is run.
	// +optional
	MissedSchedules int32 `json:"missedSchedules,omitempty"`

	// LastSuccessfulBackup names the newest MySQLBackup of this MySQL that succeeded.
	// +optional
	LastSuccessfulBackup string `json:"lastSuccessfulBackup,omitempty"`

	// LastSuccessfulTime is when it completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// LastFailedBackup names the newest MySQLBackup of this MySQL that failed, when it is newer
	// than the last successful one.
	// +optional
	LastFailedBackup string `json:"lastFailedBackup,omitempty"`

	// LastVerifiedBackup names the newest MySQLBackup that passed verification.
	// +optional
	LastVerifiedBackup string `json:"lastVerifiedBackup,omitempty"`

	// PreUpgradeBackup names the backup taken before the last image change.
	// +optional
	PreUpgradeBackup string `json:"preUpgradeBackup,omitempty"`
}

// MySQLRestoreStatus says what a MySQL's data was restored from.
type MySQLRestoreStatus struct {
	// Source is the MySQLBackup's name, or the storage location, the data came from.
	Source string `json:"source"`

	// CompletionTime is when the restored server first became ready.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}
