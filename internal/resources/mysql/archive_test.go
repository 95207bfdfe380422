package mysql

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func withArchive(volume bool) func(*appsv1alpha1.MySQL) {
	return func(m *appsv1alpha1.MySQL) {
		storage := appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{Endpoint: "http://s3:7070", Bucket: "backups", Prefix: "prod/",
			CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"}}}
		if volume {
			storage = appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}
		}
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", Storage: storage,
			Encryption:          &appsv1alpha1.BackupEncryption{KeySecretRef: appsv1alpha1.SecretKeyReference{Name: "keys", Key: "backup"}},
			PointInTimeRecovery: &appsv1alpha1.PointInTimeRecovery{Enabled: true}}
	}
}

// With point-in-time recovery, a single server keeps a binary log, and every member's pod ships
// it from beside the server: reading the files, never writing them, to the backups' storage
// under the MySQL's own archive root, sealed with the backups' passphrase.
func TestArchivedMySQLShipsItsBinaryLog(t *testing.T) {
	m := mysql(withArchive(false))
	if cnf := MyCnf(m); !strings.Contains(cnf, "log_bin=binlog\n") || !strings.Contains(cnf, "sync_binlog=1\n") {
		t.Errorf("my.cnf of a server with its binary log archived:\n%s", cnf)
	}
	if cnf := MyCnf(mysql(nil)); strings.Contains(cnf, "log_bin") {
		t.Errorf("my.cnf of a server without point-in-time recovery keeps a binary log:\n%s", cnf)
	}
	pod := inspect.Decode[appsv1.StatefulSet](t, StatefulSet(m, nil, "tools:test")).Spec.Template.Spec
	i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == ShipperContainer })
	if i < 0 {
		t.Fatalf("no %s container in %v", ShipperContainer, pod.Containers)
	}
	shipper := pod.Containers[i]
	command := strings.Join(shipper.Command, " ")
	for _, want := range []string{"/appkeeper backup ship", "--key=prod/shop/db/binlog/uid-1", "--s3-bucket=backups", "--host=127.0.0.1"} {
		if !strings.Contains(command, want) {
			t.Errorf("shipper command %q lacks %q", command, want)
		}
	}
	if shipper.Image != "tools:test" {
		t.Errorf("shipper image %q, want the operator's", shipper.Image)
	}
	var env []string
	for _, e := range shipper.Env {
		if e.Value != "" {
			t.Errorf("shipper env %s has a literal value: secrets come by reference", e.Name)
		}
		env = append(env, e.Name+"="+e.ValueFrom.SecretKeyRef.Name)
	}
	for _, want := range []string{"MYSQL_PWD=db-backup-account", "APPKEEPER_ENCRYPTION_KEY=keys", "AWS_ACCESS_KEY_ID=s3-keys"} {
		if !slices.Contains(env, want) {
			t.Errorf("shipper env %v lacks %s", env, want)
		}
	}
	for _, mount := range shipper.VolumeMounts {
		if mount.Name == DataVolume && !mount.ReadOnly {
			t.Error("the shipper mounts the data volume writable")
		}
	}

	// A volume storage is mounted apart from a restore's, which the same pod may mount.
	pod = inspect.Decode[appsv1.StatefulSet](t, StatefulSet(mysql(withArchive(true)), nil, "tools:test")).Spec.Template.Spec
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Name == archiveStoragePaths.volume && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "backups"
	}) {
		t.Errorf("the archive's volume claim is not mounted: %v", pod.Volumes)
	}
}
