package mysqlbackup

import (
	"slices"
	"testing"

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
