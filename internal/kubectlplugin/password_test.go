package kubectlplugin_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestPasswordPrintsTheSecretsPasswordAndWarns(t *testing.T) {
	ns := newNamespace(t, "password")
	create(t,
		&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-credentials"}, StringData: map[string]string{"password": "app-secret", "root-password": "root-secret"}},
		&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own"}, Spec: appsv1alpha1.MySQLSpec{CredentialsSecretRef: &appsv1alpha1.SecretReference{Name: "mine"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}, StringData: map[string]string{"root-password": "my-root"}},
	)
	for _, c := range []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"mysql/db"}, "app-secret\n", "Warning: printing the password of shop of mysql/db (secret/db-credentials key password): anyone who sees this output can use it\n"},
		{[]string{"my/db", "--user", "root"}, "root-secret\n", "Warning: printing the password of root of mysql/db (secret/db-credentials key root-password): anyone who sees this output can use it\n"},
		{[]string{"mysql/own", "--user=root"}, "my-root\n", "Warning: printing the password of root of mysql/own (secret/mine key root-password): anyone who sees this output can use it\n"},
	} {
		r := kubectlAppkeeper(t, append([]string{"password", "-n", ns}, c.args...)...)
		if r.code != 0 || r.stdout != c.stdout || r.stderr != c.stderr {
			t.Errorf("password %v: exit %d, stdout %q, stderr %q; want %q and %q", c.args, r.code, r.stdout, r.stderr, c.stdout, c.stderr)
		}
	}
	fails(t, 1, []string{"mysql/own has no spec.user, so no application user: use --user root"}, "password", "-n", ns, "mysql/own")
	fails(t, 2, []string{"--user admin: the users are app (spec.user) and root"}, "password", "-n", ns, "mysql/db", "--user", "admin")
	fails(t, 2, []string{"wp/blog: only mysql/<name> can be given here"}, "password", "wp/blog")
}
