package backupjob

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// MySQLNameIndex indexes MySQLBackups by the MySQL they back up.
const MySQLNameIndex = "mysqlbackup.spec.mysqlName"

// IndexBackupsByMySQL registers the index of MySQLBackups by the MySQL they back up. The MySQL and
// MySQLBackup controllers both read it, so the manager registers it once, before either.
func IndexBackupsByMySQL(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &appsv1alpha1.MySQLBackup{}, MySQLNameIndex, func(obj client.Object) []string {
		return []string{obj.(*appsv1alpha1.MySQLBackup).Spec.MySQLName}
	}); err != nil {
		return fmt.Errorf("index MySQLBackups by MySQL: %w", err)
	}
	return nil
}
