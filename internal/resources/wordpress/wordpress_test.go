package wordpress

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func wordpress(mutate func(*appsv1alpha1.WordPress)) *appsv1alpha1.WordPress {
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: "shop", UID: "uid-1"},
		Spec: appsv1alpha1.WordPressSpec{
			Image:    appsv1alpha1.DefaultWordPressImage,
			Replicas: ptr.To[int32](1),
			Database: appsv1alpha1.WordPressDatabase{MySQL: &appsv1alpha1.MySQLSpec{
				Image:   appsv1alpha1.DefaultMySQLImage,
				Storage: appsv1alpha1.Storage{Size: resource.MustParse("10Gi")},
			}},
			Storage: appsv1alpha1.WordPressStorage{
				Size: resource.MustParse("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			},
			DeletionPolicy: appsv1alpha1.DeletionPolicyRetain,
		},
	}
	if mutate != nil {
		mutate(wp)
	}
	return wp
}

func database(mutate func(*appsv1alpha1.MySQL)) *appsv1alpha1.MySQL {
	db := MySQL(wordpress(nil))
	if mutate != nil {
		mutate(db)
	}
	return db
}

func TestMySQL(t *testing.T) {
	db := MySQL(wordpress(nil))
	if db.Name != "blog-mysql" || db.Namespace != "shop" || db.Spec.Database != "wordpress" || db.Spec.User != "wordpress" {
		t.Errorf("name/database/user = %s/%s/%s", db.Name, db.Spec.Database, db.Spec.User)
	}
	if owner := metav1.GetControllerOf(db); owner == nil || owner.Kind != "WordPress" || owner.UID != "uid-1" {
		t.Errorf("owner = %+v", owner)
	}
	if db.Kind != "MySQL" || db.APIVersion != appsv1alpha1.GroupVersion.String() {
		t.Errorf("type = %s %s", db.APIVersion, db.Kind)
	}
	named := MySQL(wordpress(func(wp *appsv1alpha1.WordPress) { wp.Spec.Database.MySQL.Database = "site" }))
	if named.Spec.Database != "site" || named.Spec.User != "wordpress" {
		t.Errorf("a database the spec names is replaced: %s/%s", named.Spec.Database, named.Spec.User)
	}
	if db.Spec.Restore != nil {
		t.Errorf("spec.restore = %+v on a site that restores nothing", db.Spec.Restore)
	}
	restored := MySQL(wordpress(func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Restore = &appsv1alpha1.WordPressRestore{BackupName: "monday"}
	}))
	if r := restored.Spec.Restore; r == nil || r.BackupName != "monday-db" || r.Location != nil {
		t.Errorf("spec.restore = %+v, want the restore point's MySQLBackup monday-db", r)
	}
}

func TestDeployment(t *testing.T) {
	tests := []struct {
		name  string
		wp    *appsv1alpha1.WordPress
		db    *appsv1alpha1.MySQL
		check func(t *testing.T, dep *appsv1.Deployment, env map[string]corev1.EnvVar)
	}{
		{
			name: "generated database Secret: every coordinate by reference; one writer on the volume at a time",
			wp:   wordpress(nil),
			db:   database(nil),
			check: func(t *testing.T, dep *appsv1.Deployment, env map[string]corev1.EnvVar) {
				for name, key := range map[string]string{
					"WORDPRESS_DB_HOST": "host", "WORDPRESS_DB_NAME": "database", "WORDPRESS_DB_USER": "user", "WORDPRESS_DB_PASSWORD": "password",
				} {
					if ref := env[name].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "blog-mysql-credentials" || ref.SecretKeyRef.Key != key {
						t.Errorf("%s = %+v, want blog-mysql-credentials/%s", name, env[name], key)
					}
				}
				if dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
					t.Errorf("strategy = %s, want Recreate for a ReadWriteOnce volume", dep.Spec.Strategy.Type)
				}
				vol := dep.Spec.Template.Spec.Volumes[0]
				if vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "blog-content" {
					t.Errorf("volume = %+v", vol)
				}
				if owner := dep.OwnerReferences[0]; owner.Kind != "WordPress" || !*owner.Controller {
					t.Errorf("owner = %+v", owner)
				}
				if dep.Spec.Template.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("pod security context = %+v", dep.Spec.Template.Spec.SecurityContext)
				}
			},
		},
		{
			name: "user's database Secret: the password by reference, the rest from the MySQL's spec",
			wp:   wordpress(nil),
			db: database(func(db *appsv1alpha1.MySQL) {
				db.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "mine"}
			}),
			check: func(t *testing.T, _ *appsv1.Deployment, env map[string]corev1.EnvVar) {
				if env["WORDPRESS_DB_HOST"].Value != "blog-mysql.shop.svc" || env["WORDPRESS_DB_USER"].Value != "wordpress" {
					t.Errorf("host/user = %+v / %+v", env["WORDPRESS_DB_HOST"], env["WORDPRESS_DB_USER"])
				}
				if ref := env["WORDPRESS_DB_PASSWORD"].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "mine" {
					t.Errorf("password = %+v", env["WORDPRESS_DB_PASSWORD"])
				}
			},
		},
		{
			name: "a shared volume rolls replicas without downtime, spread over nodes",
			wp: wordpress(func(wp *appsv1alpha1.WordPress) {
				wp.Spec.Replicas = ptr.To[int32](3)
				wp.Spec.Storage.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
			}),
			db: database(nil),
			check: func(t *testing.T, dep *appsv1.Deployment, _ map[string]corev1.EnvVar) {
				if *dep.Spec.Replicas != 3 || dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
					dep.Spec.Strategy.RollingUpdate.MaxUnavailable.IntVal != 0 {
					t.Errorf("replicas/strategy = %d/%+v", *dep.Spec.Replicas, dep.Spec.Strategy)
				}
				if err := inspect.SpreadProblem(dep.Spec.Template.Spec.Affinity, dep.Spec.Selector.MatchLabels); err != nil {
					t.Error(err)
				}
			},
		},
		{
			name: "a volume of one node keeps the pod where it can mount it",
			wp:   wordpress(nil),
			db:   database(nil),
			check: func(t *testing.T, dep *appsv1.Deployment, _ map[string]corev1.EnvVar) {
				if affinity := dep.Spec.Template.Spec.Affinity; affinity != nil {
					t.Errorf("affinity = %+v, want none", affinity)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dep := inspect.Decode[appsv1.Deployment](t, Deployment(tt.wp, tt.db))
			env := map[string]corev1.EnvVar{}
			for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
				if e.Value != "" && e.ValueFrom != nil {
					t.Errorf("%s has both a value and a reference", e.Name)
				}
				env[e.Name] = e
			}
			for _, k := range SaltKeys {
				if ref := env[k].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "blog-salts" || ref.SecretKeyRef.Key != k {
					t.Errorf("%s = %+v, want blog-salts/%s", k, env[k], k)
				}
			}
			tt.check(t, dep, env)
		})
	}
}

func TestContentClaim(t *testing.T) {
	for _, tt := range []struct {
		policy    appsv1alpha1.DeletionPolicy
		wantOwner bool
	}{{appsv1alpha1.DeletionPolicyRetain, false}, {appsv1alpha1.DeletionPolicyDelete, true}} {
		pvc := inspect.Decode[corev1.PersistentVolumeClaim](t, ContentClaim(wordpress(func(wp *appsv1alpha1.WordPress) { wp.Spec.DeletionPolicy = tt.policy })))
		if got := len(pvc.OwnerReferences) > 0; got != tt.wantOwner {
			t.Errorf("%s: owned = %v, want %v", tt.policy, got, tt.wantOwner)
		}
		if pvc.Name != "blog-content" || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" || pvc.Spec.AccessModes[0] != corev1.ReadWriteOnce {
			t.Errorf("claim = %+v", pvc)
		}
		if pvc.Labels[appsv1alpha1.LabelInstance] != "blog" || pvc.Labels[appsv1alpha1.LabelName] != appsv1alpha1.WordPressAppName {
			t.Errorf("labels = %v: the claim must map back to its WordPress", pvc.Labels)
		}
	}
}

func TestSaltsAndService(t *testing.T) {
	salts := GenerateSalts()
	other := GenerateSalts()
	for _, k := range SaltKeys {
		if len(salts[k]) < 50 || string(salts[k]) == string(other[k]) {
			t.Errorf("salt %s = %q: too short or not random", k, salts[k])
		}
	}
	s := inspect.Decode[corev1.Secret](t, SaltsSecret(wordpress(nil), salts))
	if s.Name != "blog-salts" || len(s.Data) != len(SaltKeys) || len(s.OwnerReferences) != 1 {
		t.Errorf("salts Secret = %s, %d keys, owners %v", s.Name, len(s.Data), s.OwnerReferences)
	}
	svc := inspect.Decode[corev1.Service](t, Service(wordpress(func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Service = appsv1alpha1.WebServerService{Type: appsv1alpha1.ServiceTypeNodePort, Port: 8080, NodePort: ptr.To[int32](30080)}
	})))
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].NodePort != 30080 ||
		svc.Spec.Ports[0].TargetPort.StrVal != portName {
		t.Errorf("service = %+v", svc.Spec)
	}
}
