# The small utility image for PodSet samples and test client pods, in place of busybox:1.36:
# Debian's busybox with every applet (sh, sleep, wget, nc...) linked into /bin, beside the base's
# own tools, which keep their names.
IMAGE=localhost/appkeeper/busybox:1.35
PACKAGES=(busybox)
CMD='["sh"]'

after_install() {
	in_root "$1" busybox --install -s /bin
}
