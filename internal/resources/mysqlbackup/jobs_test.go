package mysqlbackup

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
)

func TestABackupReadsAReplicaInStepWhenThereIsOne(t *testing.T) {
	cluster := func(members ...appsv1alpha1.MySQLMemberStatus) *appsv1alpha1.MySQL {
		m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
		m.Status.Members = members
		return m
	}
	primary := appsv1alpha1.MySQLMemberStatus{Name: "db-0", Role: appsv1alpha1.RolePrimary}
	inStep := func(name string, lag int64) appsv1alpha1.MySQLMemberStatus {
		return appsv1alpha1.MySQLMemberStatus{Name: name, Role: appsv1alpha1.RoleReplica, LagSeconds: ptr.To(lag)}
	}
	broken := inStep("db-2", 0)
	broken.Message = "replication stopped: error 1062"
	for _, c := range []struct {
		name string
		m    *appsv1alpha1.MySQL
		want string
	}{
		{"one server", &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}}, ""},
		{"two replicas in step: the last", cluster(primary, inStep("db-1", 0), inStep("db-2", 1)), "db-2"},
		{"one replica lags, one is broken", cluster(primary, inStep("db-1", 60), broken), ""},
		{"a replica that lags a little", cluster(inStep("db-0", 5), primary), "db-0"},
		{"a member that cannot be read", cluster(primary, appsv1alpha1.MySQLMemberStatus{Name: "db-1", Role: appsv1alpha1.RoleUnknown}), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			member := SourceMember(c.m)
			if member != c.want {
				t.Fatalf("source member %q, want %q", member, c.want)
			}
			want := []string{"--" + backup.FlagHost + "=db.shop.svc"}
			if member != "" {
				want = []string{"--" + backup.FlagHost + "=" + member + ".db-headless.shop.svc", "--" + backup.FlagCatchUpHost + "=db.shop.svc"}
			}
			loc := appsv1alpha1.BackupLocation{Key: "k"}
			loc.Storage.Volume = &appsv1alpha1.VolumeStorage{ClaimName: "backups"}
			job := DumpJob(&appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b"}}, c.m, member, loc, nil, "tools", "server")
			command := job.Spec.Template.Spec.Containers[0].Command
			for _, arg := range want {
				if !slices.Contains(command, arg) {
					t.Errorf("dump command %v lacks %s", command, arg)
				}
			}
		})
	}
}

// A restore to a point in time fetches the backup, then writes the archived transactions up to
// the target with the server image's own tools, loaded after the dump; both do nothing once the
// data folder is initialised.
func TestARestoreToAPointInTimeReplaysAfterTheDump(t *testing.T) {
	loc := appsv1alpha1.BackupLocation{Key: "prod/shop/db/monday",
		Storage: appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}}
	plain := Restore(loc, nil, "tools:test", "mariadb:10.11")
	if len(plain.Containers) != 1 || *plain.Containers[0].Name != FetchContainer {
		t.Fatalf("a restore without a point in time runs %d containers", len(plain.Containers))
	}
	at := metav1.Date(2026, 11, 27, 10, 41, 59, 0, time.UTC)
	r := Restore(loc, &appsv1alpha1.PointInTimeTarget{Time: &at}, "tools:test", "mariadb:10.11")
	var names []string
	for _, c := range r.Containers {
		names = append(names, *c.Name)
	}
	if !slices.Equal(names, []string{FetchContainer, InstallContainer, ReplayContainer}) {
		t.Fatalf("init containers %v", names)
	}
	replay := r.Containers[2]
	if *replay.Image != "mariadb:10.11" {
		t.Errorf("the replay runs in %s, want the server's image, whose mariadb-binlog it needs", *replay.Image)
	}
	for _, want := range []string{"--" + backup.FlagUntilTime + "=2026-11-27T10:41:59Z", "--key=prod/shop/db/monday",
		"--" + backup.FlagOut + "=" + initdbPath + "/" + replayFile, "--" + backup.FlagUnlessInit + "=" + dataPath} {
		if !slices.Contains(replay.Command, want) {
			t.Errorf("replay command %v lacks %s", replay.Command, want)
		}
	}
	if replayFile <= restoreFile {
		t.Errorf("%s sorts before %s: the entrypoint would replay before it loads the dump", replayFile, restoreFile)
	}
	gtid := Restore(loc, &appsv1alpha1.PointInTimeTarget{GTID: "0-1-1234"}, "tools:test", "mariadb:10.11")
	if !slices.Contains(gtid.Containers[2].Command, "--"+backup.FlagUntilGTID+"=0-1-1234") {
		t.Errorf("replay command %v lacks the GTID", gtid.Containers[2].Command)
	}
}

// A backup into the storage of spec.backup, as the schedule takes it or as a person asks for it,
// names the binary log archive beside it; one elsewhere cannot, as a replay would not find it.
func TestABackupBesideTheArchiveNamesIt(t *testing.T) {
	storage := appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "u1"}, Spec: appsv1alpha1.MySQLSpec{
		Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", Storage: storage, PointInTimeRecovery: &appsv1alpha1.PointInTimeRecovery{Enabled: true}}}}
	elsewhere := appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "other"}}
	for _, c := range []struct {
		name    string
		storage *appsv1alpha1.BackupStorage
		want    bool
	}{{"on demand", nil, true}, {"scheduled", storage.DeepCopy(), true}, {"elsewhere", &elsewhere, false}} {
		b := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b"}, Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: "db", Storage: c.storage}}
		job := DumpJob(b, m, "", appsv1alpha1.BackupLocation{Storage: storage, Key: "shop/db/b"}, nil, "tools:test", "mariadb:10.11")
		args := job.Spec.Template.Spec.Containers[0].Command
		if got := slices.Contains(args, "--"+backup.FlagBinlogArchive+"=shop/db/binlog/u1"); got != c.want {
			t.Errorf("%s: names the archive %v, want %v: %v", c.name, got, c.want, args)
		}
	}
}
