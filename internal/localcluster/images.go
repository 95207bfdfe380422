package localcluster

import (
	"context"
	"time"
)

// Local images that `make images` builds from Debian's packages and a real node loads at start, as
// no registry can be reached. Each follows the contract of the upstream image it stands for (user,
// ports, paths, environment, entrypoint); none carries an upstream name.
const (
	LocalNginxImage     = "localhost/appkeeper/nginx:1.22"
	LocalMemcachedImage = "localhost/appkeeper/memcached:1.6"
	LocalMariaDBImage   = "localhost/appkeeper/mariadb:10.11"
	LocalWordPressImage = "localhost/appkeeper/wordpress:6.1"
	LocalBusyboxImage   = "localhost/appkeeper/busybox:1.35"
	// The Prometheus exporters a kind's spec.monitoring names on the real node. Debian packages no
	// memcached exporter, so Memcached's runs nowhere here.
	LocalNginxExporterImage  = "localhost/appkeeper/nginx-exporter:0.11"
	LocalMySQLdExporterImage = "localhost/appkeeper/mysqld-exporter:0.14"
)

// brokenImage is an image whose entrypoint exits with status 1 after one line on stderr, whatever
// the pod asks of it: a failed upgrade on the real node, which can pull no broken image from
// anywhere. Not a default of any kind; "make images" builds it as it builds the others.
const brokenImage = "localhost/appkeeper/broken:exit1"

// localImageFiles are the tarballs "make images" writes into bin/images, one for each image
// above and the sandbox's. The real node needs them all, since no image can be pulled.
var localImageFiles = []string{
	"pause.tar", "busybox.tar", "nginx.tar", "memcached.tar", "mariadb.tar", "wordpress.tar", "broken.tar",
	"nginx-exporter.tar", "mysqld-exporter.tar",
}

// importBackupImage loads the image packed from this very binary, new with every build, so not
// in the image store.
func (n *realNode) importBackupImage(ctx context.Context) error {
	began := time.Now()
	if err := n.ctr(ctx, "images", "import", "--local", "--no-unpack", n.host.backupTarball); err != nil {
		return err
	}
	n.host.log("imported the backup image", "node", n.name, "image", n.host.backupImage, "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// BrokenImage is the image the real node imported whose containers exit with status 1 at start,
// for tests of failed upgrades and their rollbacks; empty without a real node.
func (c *Cluster) BrokenImage() string {
	if c.real == nil {
		return ""
	}
	return brokenImage
}
