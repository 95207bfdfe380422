// Package await waits for, and checks, what a user of appkeeper would see of its resources:
// conditions, Events, health as kstatus and Argo CD read it, rollbacks. Its name keeps it apart from
// apimachinery's wait, which the same tests use.
package await
