package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// exporterGrant is the only statement that gives the exporter's account privileges.
var exporterGrant = regexp.MustCompile(`(?m)^GRANT (.*) ON (.*) TO 'appkeeper_exporter'@'127\.0\.0\.1';$`)

func TestMonitoringRunsTheExporterWithAnAccountOfItsOwn(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Monitoring.Enabled = true })
	childrenExist(t, ns, true)
	await.Eventually(t, timeout, func(context.Context) error {
		return exporterProblem(get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template)
	})
	password := exporterPassword(t, ns)
	if err := accountsProblem(t, ns, true); err != nil {
		t.Fatal(err)
	}

	patchSpec(t, ns, `{"spec":{"monitoring":{"enabled":false}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if inspect.HasContainer(get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template, "exporter") {
			return errors.New("the exporter stays with monitoring off")
		}
		return accountsProblem(t, ns, false)
	})
	if exporterPassword(t, ns) != password {
		t.Fatal("turning monitoring off changed the exporter's password")
	}

	patchSpec(t, ns, `{"spec":{"monitoring":{"enabled":true}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if err := exporterProblem(get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template); err != nil {
			return err
		}
		return accountsProblem(t, ns, true)
	})
	if exporterPassword(t, ns) != password {
		t.Fatal("turning monitoring on again made a new password")
	}
}

// exporterProblem says how the pod's exporter differs from the one monitoring runs: only the
// exporter mounts the account's option file, read-only.
func exporterProblem(template corev1.PodTemplateSpec) error {
	if problem := inspect.ExporterProblem(template, appsv1alpha1.DefaultMySQLExporterImage, 9104,
		"--config.my-cnf=/etc/mysqld-exporter/.my.cnf"); problem != "" {
		return errors.New(problem)
	}
	volume := ""
	for _, v := range template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "db-exporter-account" {
			volume = v.Name
		}
	}
	for _, c := range template.Spec.Containers {
		for _, mount := range c.VolumeMounts {
			if mount.Name != volume {
				continue
			}
			if c.Name != "exporter" || !mount.ReadOnly || mount.MountPath != "/etc/mysqld-exporter" {
				return fmt.Errorf("container %s mounts the exporter's account at %s, read-only %v", c.Name, mount.MountPath, mount.ReadOnly)
			}
			return nil
		}
	}
	return errors.New("the exporter does not mount the Secret db-exporter-account")
}

// exporterPassword is the password in the exporter's Secret, which its option file holds too.
func exporterPassword(t *testing.T, ns string) string {
	t.Helper()
	var password string
	await.Eventually(t, timeout, func(context.Context) error {
		s := &corev1.Secret{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-exporter-account"}, s); err != nil {
			return err
		}
		password = string(s.Data["password"])
		want := "[client]\nuser=appkeeper_exporter\npassword=" + password + "\nhost=127.0.0.1\nport=3306\n"
		if password == "" || string(s.Data[".my.cnf"]) != want {
			return fmt.Errorf("exporter Secret password %q, .my.cnf %q", password, s.Data[".my.cnf"])
		}
		return nil
	})
	return password
}

// accountsProblem says how the SQL mysqld runs at start differs from what keeps the exporter's
// account: with monitoring on, the account with PROCESS, REPLICATION CLIENT and SELECT and no
// more; with it off, no account.
func accountsProblem(t *testing.T, ns string, monitoring bool) error {
	t.Helper()
	sql := string(get(t, ns, "db-backup-account", &corev1.Secret{}).Data["accounts.sql"])
	grants := exporterGrant.FindAllStringSubmatch(sql, -1)
	if !monitoring {
		if len(grants) > 0 || !strings.Contains(sql, "DROP USER IF EXISTS 'appkeeper_exporter'@'127.0.0.1';") {
			return fmt.Errorf("with monitoring off, the init-file keeps the exporter's account:\n%s", sql)
		}
		return nil
	}
	if len(grants) != 1 || grants[0][1] != resources.ExporterPrivileges || grants[0][2] != "*.*" ||
		!strings.Contains(sql, "WITH MAX_USER_CONNECTIONS 3") || strings.Contains(sql, "DROP USER") {
		return fmt.Errorf("the init-file does not give the exporter's account exactly %s:\n%s", resources.ExporterPrivileges, sql)
	}
	return nil
}
