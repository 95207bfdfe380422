package mysql

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func TestExporter(t *testing.T) {
	for _, monitoring := range []bool{false, true} {
		t.Run("monitoring "+strconv.FormatBool(monitoring), func(t *testing.T) {
			m := mysql(func(m *appsv1alpha1.MySQL) { m.Spec.Monitoring.Enabled = monitoring })
			pod := StatefulSet(m, nil, "").Spec.Template.Spec
			if !monitoring {
				if len(pod.Containers) != 1 {
					t.Fatalf("%d containers with monitoring off, want mysql alone", len(pod.Containers))
				}
				return
			}
			if len(pod.Containers) != 2 {
				t.Fatalf("%d containers, want mysql and exporter", len(pod.Containers))
			}
			c := pod.Containers[1]
			if *c.Image != appsv1alpha1.DefaultMySQLExporterImage || *c.Ports[0].ContainerPort != 9104 ||
				strings.Join(c.Args, " ") != "--config.my-cnf=/etc/mysqld-exporter/.my.cnf" {
				t.Errorf("exporter image/port/args = %s/%d/%v", *c.Image, *c.Ports[0].ContainerPort, c.Args)
			}
			if len(c.VolumeMounts) != 1 || *c.VolumeMounts[0].MountPath != "/etc/mysqld-exporter" || !*c.VolumeMounts[0].ReadOnly {
				t.Errorf("exporter mounts = %+v, want its option file read-only", c.VolumeMounts)
			}
			for _, mount := range pod.Containers[0].VolumeMounts {
				if *mount.Name == *c.VolumeMounts[0].Name {
					t.Error("mysqld mounts the exporter's password")
				}
			}
			volume := pod.Volumes[len(pod.Volumes)-1]
			if *volume.Secret.SecretName != "db-exporter-account" || *volume.Secret.DefaultMode != 0o440 {
				t.Errorf("exporter volume = %+v", volume.Secret)
			}
		})
	}
}

func TestExporterAccountSecret(t *testing.T) {
	s := inspect.Decode[corev1.Secret](t, ExporterAccountSecret(mysql(nil), []byte("pw")))
	want := "[client]\nuser=appkeeper_exporter\npassword=pw\nhost=127.0.0.1\nport=3306\n"
	if s.Name != "db-exporter-account" || string(s.Data[".my.cnf"]) != want || len(s.OwnerReferences) != 1 {
		t.Errorf("name/.my.cnf/owners = %s/%q/%v", s.Name, s.Data[".my.cnf"], s.OwnerReferences)
	}
}

func TestAccountsSQL(t *testing.T) {
	tests := []struct {
		name    string
		account ExporterAccount
		want    string
	}{
		{name: "monitoring never on", account: ExporterAccount{}, want: ""},
		{name: "on", account: ExporterAccount{Password: []byte("pw"), Enabled: true},
			want: "GRANT PROCESS, REPLICATION CLIENT, SELECT /*M!100509 , SLAVE MONITOR */ ON *.* TO 'appkeeper_exporter'@'127.0.0.1';"},
		{name: "turned off", account: ExporterAccount{Password: []byte("pw")},
			want: "DROP USER IF EXISTS 'appkeeper_exporter'@'127.0.0.1';"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql := AccountsSQL([]byte("backup"), tt.account, ClusterAccount{})
			if !strings.HasPrefix(sql, "CREATE USER IF NOT EXISTS 'appkeeper_backup'@'%'") {
				t.Errorf("the backup account is no longer first:\n%s", sql)
			}
			if got := strings.Contains(sql, "appkeeper_exporter"); got != (tt.want != "") || !strings.Contains(sql, tt.want) {
				t.Errorf("SQL lacks %q:\n%s", tt.want, sql)
			}
		})
	}
}

// TestExporterAccountOnARealServer starts MariaDB with the init-file the operator writes, as the
// server pod does, and connects with the option file the exporter reads: the account can read
// what mysqld_exporter reads and write nothing, and turning monitoring off drops it.
func TestExporterAccountOnARealServer(t *testing.T) {
	server := newMariaDB(t)
	dir := t.TempDir()
	initFile, cnf := filepath.Join(dir, AccountsFile), filepath.Join(dir, ExporterConfigFile)
	password := []byte("Exp0rterPassw0rd")
	writeFile(t, cnf, ExporterConfig(password))
	asExporter := func(sql string) error {
		// The port on the command line overrides the option file's, which the pod's mysqld listens on.
		return server.run([]string{"mysql", "--defaults-file=" + cnf, "-P", strconv.Itoa(server.port), "-N", "-e", sql})
	}

	writeFile(t, initFile, AccountsSQL([]byte("backup"), ExporterAccount{Password: password, Enabled: true}, ClusterAccount{}))
	server.start(t, "--init-file="+initFile)
	server.asRoot(t, "CREATE DATABASE app; CREATE TABLE app.orders (id INT)")
	if err := asExporter("SHOW GLOBAL STATUS LIKE 'Uptime'"); err != nil {
		t.Errorf("SHOW GLOBAL STATUS: %v", err)
	}
	if err := asExporter("SHOW SLAVE STATUS"); err != nil {
		t.Errorf("SHOW SLAVE STATUS, which the exporter's slave_status collector runs: %v", err)
	}
	if err := asExporter("SHOW GLOBAL VARIABLES LIKE 'version'; SELECT COUNT(*) FROM information_schema.processlist; SELECT * FROM app.orders"); err != nil {
		t.Errorf("reading what the exporter reads: %v", err)
	}
	for _, write := range []string{"CREATE TABLE app.stolen (id INT)", "INSERT INTO app.orders VALUES (1)",
		"CREATE DATABASE other", "DROP TABLE app.orders", "CREATE USER 'x'@'%'", "SET GLOBAL max_connections = 1"} {
		if err := asExporter(write); err == nil {
			t.Errorf("the exporter account may %s", write)
		}
	}

	server.stop()
	writeFile(t, initFile, AccountsSQL([]byte("backup"), ExporterAccount{Password: password}, ClusterAccount{}))
	server.start(t, "--init-file="+initFile)
	if err := asExporter("SELECT 1"); err == nil {
		t.Error("the exporter account still logs in with monitoring off")
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
