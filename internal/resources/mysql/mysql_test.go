package mysql

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func mysql(mutate func(*appsv1alpha1.MySQL)) *appsv1alpha1.MySQL {
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "uid-1"},
		Spec: appsv1alpha1.MySQLSpec{
			Image:          appsv1alpha1.DefaultMySQLImage,
			Storage:        appsv1alpha1.Storage{Size: resource.MustParse("10Gi")},
			Database:       "shop",
			User:           "app",
			DeletionPolicy: appsv1alpha1.DeletionPolicyRetain,
		},
	}
	if mutate != nil {
		mutate(m)
	}
	return m
}

func TestStatefulSet(t *testing.T) {
	tests := []struct {
		name  string
		m     *appsv1alpha1.MySQL
		check func(t *testing.T, sts *appsv1.StatefulSet)
	}{
		{
			name: "one restricted member on its own volume, passwords only by reference",
			m:    mysql(nil),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if sts.Name != "db" || *sts.Spec.Replicas != 1 || sts.Spec.ServiceName != "db-headless" {
					t.Errorf("name/replicas/serviceName = %s/%d/%s", sts.Name, *sts.Spec.Replicas, sts.Spec.ServiceName)
				}
				if owner := sts.OwnerReferences[0]; owner.Kind != "MySQL" || owner.UID != "uid-1" || !*owner.Controller {
					t.Errorf("owner = %+v", owner)
				}
				if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
					t.Errorf("whenDeleted = %s, want Retain", p.WhenDeleted)
				}
				claim := sts.Spec.VolumeClaimTemplates[0]
				if claim.Name != DataVolume || claim.Spec.Resources.Requests.Storage().String() != "10Gi" ||
					claim.Spec.AccessModes[0] != corev1.ReadWriteOnce || claim.Spec.StorageClassName != nil {
					t.Errorf("claim template = %+v", claim)
				}
				if claim.Labels[appsv1alpha1.LabelInstance] != "db" || claim.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
					t.Errorf("claim labels = %v, want the instance and managed-by labels", claim.Labels)
				}
				pod := sts.Spec.Template.Spec
				psc := pod.SecurityContext
				if !*psc.RunAsNonRoot || *psc.RunAsUser != 999 || *psc.FSGroup != 999 || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("pod security context = %+v", psc)
				}
				c := pod.Containers[0]
				if *c.SecurityContext.AllowPrivilegeEscalation || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
					t.Errorf("container security context = %+v", c.SecurityContext)
				}
				env := map[string]corev1.EnvVar{}
				for _, e := range c.Env {
					env[e.Name] = e
				}
				for name, key := range map[string]string{"MYSQL_ROOT_PASSWORD": "root-password", "MYSQL_PASSWORD": "password"} {
					ref := env[name].ValueFrom
					if env[name].Value != "" || ref == nil || ref.SecretKeyRef.Name != "db-credentials" || ref.SecretKeyRef.Key != key {
						t.Errorf("%s = %+v, want a reference to db-credentials/%s", name, env[name], key)
					}
				}
				if env["MYSQL_ROOT_HOST"].Value != "127.0.0.1" {
					t.Errorf("MYSQL_ROOT_HOST = %+v, want root reachable only from the pod's loopback", env["MYSQL_ROOT_HOST"])
				}
				if env["MYSQL_DATABASE"].Value != "shop" || env["MYSQL_USER"].Value != "app" {
					t.Errorf("database/user env = %+v / %+v", env["MYSQL_DATABASE"], env["MYSQL_USER"])
				}
				if c.ReadinessProbe.Exec == nil || !strings.Contains(strings.Join(c.ReadinessProbe.Exec.Command, " "), "SELECT 1") {
					t.Errorf("readiness probe = %+v, want a query", c.ReadinessProbe)
				}
				if c.StartupProbe == nil || c.LivenessProbe.Exec == nil {
					t.Errorf("startup/liveness probes missing")
				}
				if sts.Spec.Template.Annotations[ConfigHashAnnotation] != ConfigHash(MyCnf(mysql(nil))) {
					t.Errorf("config hash annotation = %q", sts.Spec.Template.Annotations[ConfigHashAnnotation])
				}
			},
		},
		{
			name: "Delete policy hands the volumes, a removed member's too, to the garbage collector",
			m:    mysql(func(m *appsv1alpha1.MySQL) { m.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete }),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType ||
					p.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
					t.Errorf("retention policy = %+v", p)
				}
			},
		},
		{
			name: "a referenced Secret, no database or user, a storage class",
			m: mysql(func(m *appsv1alpha1.MySQL) {
				m.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "mine"}
				m.Spec.Database, m.Spec.User = "", ""
				m.Spec.Storage.StorageClassName = ptr.To("fast")
			}),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				c := sts.Spec.Template.Spec.Containers[0]
				if len(c.Env) != 2 || c.Env[0].Name != "MYSQL_ROOT_PASSWORD" || c.Env[0].ValueFrom.SecretKeyRef.Name != "mine" {
					t.Errorf("env = %+v, want the root password from Secret mine and the root host alone", c.Env)
				}
				if *sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != "fast" {
					t.Errorf("storage class = %v", sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, inspect.Decode[appsv1.StatefulSet](t, StatefulSet(tt.m, nil, "tools:test")))
		})
	}
}

func TestConfig(t *testing.T) {
	plain := MyCnf(mysql(nil))
	if !strings.HasPrefix(plain, "[mysqld]\n") || !strings.Contains(plain, "skip-name-resolve") {
		t.Errorf("my.cnf = %q", plain)
	}
	tuned := MyCnf(mysql(func(m *appsv1alpha1.MySQL) { m.Spec.Config = []string{" max_connections=200 "} }))
	if !strings.HasSuffix(tuned, "\nmax_connections=200\n") {
		t.Errorf("my.cnf = %q, want the user's line last", tuned)
	}
	if ConfigHash(plain) == ConfigHash(tuned) {
		t.Error("a config change keeps the hash: the pod would not restart with it")
	}
	cm := inspect.Decode[corev1.ConfigMap](t, ConfigMap(mysql(nil)))
	if cm.Name != "db-config" || cm.Data[configFile] != plain || cm.OwnerReferences[0].Kind != "MySQL" {
		t.Errorf("ConfigMap = %+v", cm)
	}
}

func TestSecret(t *testing.T) {
	tests := []struct {
		policy    appsv1alpha1.DeletionPolicy
		wantOwner bool
	}{
		{appsv1alpha1.DeletionPolicyRetain, false},
		{appsv1alpha1.DeletionPolicyDelete, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			m := mysql(func(m *appsv1alpha1.MySQL) { m.Spec.DeletionPolicy = tt.policy })
			s := inspect.Decode[corev1.Secret](t, Secret(m, []byte("r00t"), []byte("pw")))
			if got := len(s.OwnerReferences) > 0; got != tt.wantOwner {
				t.Errorf("owned = %v, want %v", got, tt.wantOwner)
			}
			want := map[string]string{
				"root-password": "r00t", "password": "pw", "user": "app", "database": "shop",
				"host": "db.shop.svc", "port": "3306",
			}
			for k, v := range want {
				if string(s.Data[k]) != v {
					t.Errorf("%s = %q, want %q", k, s.Data[k], v)
				}
			}
			if s.Name != "db-credentials" || s.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
				t.Errorf("name/labels = %s/%v", s.Name, s.Labels)
			}
		})
	}
}

func TestServices(t *testing.T) {
	headless := inspect.Decode[corev1.Service](t, HeadlessService(mysql(nil)))
	if headless.Name != "db-headless" || headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("headless Service = %+v", headless.Spec)
	}
	client := inspect.Decode[corev1.Service](t, Service(mysql(nil)))
	if client.Name != "db" || client.Spec.Type != corev1.ServiceTypeClusterIP || client.Spec.Ports[0].Port != 3306 ||
		client.Spec.Ports[0].TargetPort.StrVal != portName || client.Spec.Selector[appsv1alpha1.LabelInstance] != "db" {
		t.Errorf("client Service = %+v", client.Spec)
	}
}

func TestImage(t *testing.T) {
	if got := Image(nil); got != "" {
		t.Errorf("Image(nil) = %q", got)
	}
	sts := inspect.Decode[appsv1.StatefulSet](t, StatefulSet(mysql(nil), nil, "tools:test"))
	if got := Image(sts); got != appsv1alpha1.DefaultMySQLImage {
		t.Errorf("Image = %q", got)
	}
}
