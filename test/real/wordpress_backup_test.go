//go:build real

package real

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// TestWordPressSiteComesBackFromARestorePoint loses a site, its database and its uploads, and
// brings it back under the same name from a WordPressBackup: the same posts and uploads are served.
func TestWordPressSiteComesBackFromARestorePoint(t *testing.T) {
	t.Parallel()
	store := testcluster.StartObjectStore(t, cluster.NodeAddress(), nil)
	ns := newNamespace(t, "wpbak", baseline)
	createS3Keys(t, ns, store)
	site := func(restore string) string {
		return fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  image: %s
  deletionPolicy: Delete
  database:
    mysql:
      image: %s
      storage: {size: 1Gi}
      deletionPolicy: Delete
      backup:
        schedule: "0 3 * * *"
        suspend: true
        storage:
          s3: {endpoint: %q, bucket: %s, forcePathStyle: true, credentialsSecretRef: {name: s3-keys}}
%s`, wordpressImage, mariadbImage, store.Endpoint, store.Bucket, restore)
	}
	created := time.Now()
	kubectl(t, site(""), "apply", "-n", ns, "-f", "-")
	url := waitWordPress(t, ns, created, 1)
	const admin, password = "editor", "a long passphrase for the test site"
	installSite(t, url, admin, password)
	title := "Kept across a disaster " + time.Now().Format("150405")
	id := newPost(t, url, admin, password, title)
	upload := "uploaded on a real node " + time.Now().Format(time.RFC3339Nano)
	uploadURL := uploadFile(t, url, admin, password, "note.txt", upload)
	requireBody(t, uploadURL, upload)

	began := time.Now()
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPressBackup
metadata:
  name: launch
spec:
  wordpressName: blog
  verify: true
`, "apply", "-n", ns, "-f", "-")
	point := &appsv1alpha1.WordPressBackup{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "launch"}, point); err != nil {
			return err
		}
		switch point.Status.Phase {
		case appsv1alpha1.BackupFailed:
			t.Fatalf("the restore point failed: %v", point.Status.Conditions)
		case appsv1alpha1.BackupSucceeded:
			return nil
		}
		return fmt.Errorf("restore point is %q: %v", point.Status.Phase, point.Status.Conditions)
	})
	t.Logf("restore point taken in %s: wp-content %d files, %d bytes; database in %s",
		time.Since(began).Round(time.Second), point.Status.Content.Files, point.Status.Content.Bytes, point.Status.DatabaseBackup)
	waitBackup(t, ns, point.Status.DatabaseBackup, true)

	// The site is lost: the WordPress, its MySQL, both volumes and the credentials.
	kubectl(t, "", "delete", "wordpress", "-n", ns, "blog", "--wait=true")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		claims := &corev1.PersistentVolumeClaimList{}
		if err := k8s.List(ctx, claims, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(claims.Items) > 0 {
			return fmt.Errorf("%d claims left, the first %s", len(claims.Items), claims.Items[0].Name)
		}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog-mysql"}, &appsv1alpha1.MySQL{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("MySQL blog-mysql still there (%w)", err)
		}
		return nil
	})

	restored := time.Now()
	kubectl(t, site("  restore: {backupName: launch}\n"), "apply", "-n", ns, "-f", "-")
	url = waitWordPress(t, ns, restored, 1)
	t.Logf("site restored and Available %s after it was created", time.Since(restored).Round(time.Second))
	requirePost(t, url, id, title)
	requireBody(t, uploadURL, upload)
	wp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
		t.Fatal(err)
	}
	if wp.Status.Restore == nil || wp.Status.Restore.CompletionTime == nil || !strings.Contains(wp.Status.Restore.Source, "launch") {
		t.Errorf("status.restore = %+v, want it to name launch and be complete", wp.Status.Restore)
	}
}

var uploadedURL = regexp.MustCompile(`<name>url</name><value><string>([^<]+)</string>`)

// uploadFile uploads a file through XML-RPC's wp.uploadFile, as a blogging client does, and returns
// its URL.
func uploadFile(t *testing.T, site, user, password, name, content string) string {
	t.Helper()
	call := fmt.Sprintf(`<?xml version="1.0"?>
<methodCall><methodName>wp.uploadFile</methodName><params>
<param><value><int>1</int></value></param>
<param><value><string>%s</string></value></param>
<param><value><string>%s</string></value></param>
<param><value><struct>
<member><name>name</name><value><string>%s</string></value></member>
<member><name>type</name><value><string>text/plain</string></value></member>
<member><name>bits</name><value><base64>%s</base64></value></member>
</struct></value></param>
</params></methodCall>`, user, password, name, base64.StdEncoding.EncodeToString([]byte(content)))
	body := xmlRPC(t, site, "wp.uploadFile", call)
	match := uploadedURL.FindStringSubmatch(strings.ReplaceAll(body, "\n", ""))
	if strings.Contains(body, "<fault>") || match == nil {
		t.Fatalf("XML-RPC wp.uploadFile answered no URL:\n%s", body)
	}
	return match[1]
}

// requireBody requires url to answer with body.
func requireBody(t *testing.T, url, body string) {
	t.Helper()
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		got, err := httpGet(ctx, url)
		if err != nil {
			return err
		}
		if strings.TrimSpace(got) != body {
			return fmt.Errorf("%s answers %q, want %q", url, got, body)
		}
		return nil
	})
}
