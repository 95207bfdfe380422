// Package mysqlbackup builds the Jobs of a MySQLBackup: the one that dumps the server into a
// storage, and the one that restores the dump into a scratch server to verify it; and the init
// container that loads a backup into a new MySQL.
package mysqlbackup

import (
	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// StorageOf is the storage and encryption a backup asks for, or else those of m's spec.backup;
// a nil storage when neither names one.
func StorageOf(storage *appsv1alpha1.BackupStorage, encryption *appsv1alpha1.BackupEncryption, m *appsv1alpha1.MySQL) (*appsv1alpha1.BackupStorage, *appsv1alpha1.BackupEncryption) {
	if storage == nil && m != nil && m.Spec.Backup != nil {
		return &m.Spec.Backup.Storage, m.Spec.Backup.Encryption
	}
	return storage, encryption
}
