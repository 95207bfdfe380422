//go:build real

package real

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestWordPressInstallsPublishesAndKeepsPosts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "wp", baseline)
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  image: %s
  database:
    mysql:
      image: %s
      storage: {size: 1Gi}
`, wordpressImage, mariadbImage)
	created := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	site := waitWordPress(t, ns, created, 1)

	const admin, password = "editor", "a long passphrase for the test site"
	installSite(t, site, admin, password)

	title := "Posted through XML-RPC " + time.Now().Format("150405")
	id := newPost(t, site, admin, password, title)
	requirePost(t, site, id, title)

	kubectl(t, "", "delete", "-n", ns, "wordpress", "blog")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for _, obj := range []client.Object{&appsv1.Deployment{}, &appsv1alpha1.MySQL{}, &appsv1.StatefulSet{}} {
			name := "blog-mysql"
			if _, isDeployment := obj.(*appsv1.Deployment); isDeployment {
				name = "blog"
			}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
				return fmt.Errorf("%T %s still there", obj, name)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	recreated := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	site = waitWordPress(t, ns, recreated, 1)
	requirePost(t, site, id, title)
}

// installSite runs WordPress's install form, as a person setting up the site would.
func installSite(t *testing.T, site, admin, password string) {
	t.Helper()
	installed := time.Now()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		form := url.Values{
			"weblog_title": {"Real node"}, "user_name": {admin},
			"admin_password": {password}, "admin_password2": {password}, "pw_weak": {"on"},
			"admin_email": {"editor@example.com"}, "blog_public": {"0"},
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, site+"/wp-admin/install.php?step=2", strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		body, err := do(req)
		if err != nil {
			return err
		}
		if !strings.Contains(body, "Success!") && !strings.Contains(body, "Already Installed") {
			return fmt.Errorf("the install form answered without success:\n%s", body)
		}
		return nil
	})
	t.Logf("site installed through its form in %s", time.Since(installed).Round(time.Millisecond))
}

// waitWordPress waits until the WordPress blog and its MySQL are Available and the site's replicas
// pods run on the real nodes, logs the time since since, and returns the site's URL.
func waitWordPress(t *testing.T, ns string, since time.Time, replicas int) string {
	t.Helper()
	took := waitAvailable(t, ns, "WordPress", "blog", since)
	wp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, ns, "MySQL", wp.MySQLName(), since)
	waitPods(t, ns, wp.SelectorLabels(), replicas, wordpressImage)
	t.Logf("pod start latency: WordPress and its MySQL Available %s after the WordPress was created", took)
	if wp.Status.URL == "" {
		t.Fatal("the WordPress reports no URL")
	}
	return wp.Status.URL
}

var postID = regexp.MustCompile(`<string>(\d+)</string>|<int>(\d+)</int>`)

// newPost publishes a post through XML-RPC's wp.newPost, as a blogging client would, and returns its id.
func newPost(t *testing.T, site, user, password, title string) string {
	t.Helper()
	call := fmt.Sprintf(`<?xml version="1.0"?>
<methodCall><methodName>wp.newPost</methodName><params>
<param><value><int>1</int></value></param>
<param><value><string>%s</string></value></param>
<param><value><string>%s</string></value></param>
<param><value><struct>
<member><name>post_title</name><value><string>%s</string></value></member>
<member><name>post_content</name><value><string>Written on a real node.</string></value></member>
<member><name>post_status</name><value><string>publish</string></value></member>
</struct></value></param>
</params></methodCall>`, user, password, title)
	body := xmlRPC(t, site, "wp.newPost", call)
	match := postID.FindStringSubmatch(body)
	if strings.Contains(body, "<fault>") || match == nil {
		t.Fatalf("XML-RPC wp.newPost answered no post id:\n%s", body)
	}
	return match[1] + match[2]
}

// xmlRPC posts a call of method to the site's XML-RPC endpoint and returns the answer.
func xmlRPC(t *testing.T, site, method, call string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, site+"/xmlrpc.php", strings.NewReader(call))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml")
	// A call that writes is not sent twice, and a fresh site's first one compiles much of
	// WordPress: it gets longer than a page's 3 s, on a machine that may be busy.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body, err := doUnbounded(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("XML-RPC %s: %v\n%s", method, err, body)
	}
	return body
}

// requirePost requires the site to serve post id with title.
func requirePost(t *testing.T, site, id, title string) {
	t.Helper()
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		body, err := httpGet(ctx, site+"/?p="+id)
		if err != nil {
			return err
		}
		if !strings.Contains(body, title) {
			return fmt.Errorf("post %s is served without its title %q", id, title)
		}
		return nil
	})
}
