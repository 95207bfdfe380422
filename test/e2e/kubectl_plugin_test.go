//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// kubectlAppkeeper runs `kubectl appkeeper` as a user does: kubectl finds bin/kubectl-appkeeper
// (built by make build) on the PATH.
func kubectlAppkeeper(args ...string) (string, error) {
	plugin := testcluster.RepoBinary("kubectl-appkeeper")
	if _, err := os.Stat(plugin); err != nil {
		return "", fmt.Errorf("run make build first: %w", err)
	}
	cmd := exec.Command(filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"appkeeper"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.KubeconfigPath, "PATH="+filepath.Dir(plugin)+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), fmt.Errorf("kubectl appkeeper %s: %w: %s", strings.Join(args, " "), err, exit.Stderr)
		}
		return "", err
	}
	return string(out), nil
}

// The plugin against the operator at work: what it says of instances the operator made Ready,
// rolled back, and of their children that kube-controller-manager and kwok really run.
func TestKubectlPluginOnTheOperatorsWork(t *testing.T) {
	ns := newNamespace(t, "plugin")
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata: {name: web}
spec: {image: "nginx:1.27.4", replicas: 2}
---
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata: {name: blog}
spec: {}
`, "apply", "-n", ns, "-f", "-")
	kubectl(t, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "ws/web", "wp/blog", "my/blog-mysql")

	status, err := kubectlAppkeeper("status", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`(?m)^mysql/blog-mysql +1/1 +mysql:8\.4\.6 +ready$`,
		`(?m)^webserver/web +2/2 +nginx:1\.27\.4 +ready$`,
		`(?m)^wordpress/blog +1/1 +wordpress:\S+ +ready$`,
	} {
		if !regexp.MustCompile(line).MatchString(status) {
			t.Errorf("status lacks %s:\n%s", line, status)
		}
	}

	tree, err := kubectlAppkeeper("tree", "-n", ns, "wp/blog")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`(?m)^├── Deployment/blog +1/1 ready, 1 updated$`,
		`(?m)^│   └── Pod/blog-\S+ +Running, ready$`,
		`(?m)^├── PersistentVolumeClaim/blog-content +Bound, 1Gi, retained \(no owner\)$`,
		`(?m)^└── mysql/blog-mysql +1/1 ready, mysql:8\.4\.6: ready$`,
		`(?m)^    │   └── Pod/blog-mysql-0 +Running, ready$`,
		`(?m)^    └── PersistentVolumeClaim/data-blog-mysql-0 +Bound, 10Gi, retained \(no owner\)$`,
	} {
		if !regexp.MustCompile(line).MatchString(tree) {
			t.Errorf("tree lacks %s:\n%s", line, tree)
		}
	}

	password, err := kubectlAppkeeper("password", "-n", ns, "my/blog-mysql")
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog-mysql-credentials"}, secret); err != nil {
		t.Fatal(err)
	}
	if password != string(secret.Data[appsv1alpha1.SecretKeyPassword])+"\n" {
		t.Errorf("password printed %d characters, not the Secret's password", len(password))
	}

	kubectl(t, "", "patch", "-n", ns, "ws", "web", "--type=merge", "-p", `{"spec":{"image":"nginx:broken"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		line, err := kubectlAppkeeper("status", "-n", ns, "ws/web")
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`webserver/web +2/2 +nginx:1\.27\.4 +rolled back from nginx:broken \(CrashLoopBackOff\)\n$`).MatchString(line) {
			return fmt.Errorf("status ws/web:\n%s", line)
		}
		return nil
	})
}
