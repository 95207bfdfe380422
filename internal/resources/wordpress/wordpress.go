// Package wordpress builds the children of a WordPress: its MySQL (when it runs its own), its
// Deployment, Service, wp-content PVC and the Secret of generated salts.
package wordpress

import (
	"crypto/rand"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ContainerName is the name of the WordPress container.
const ContainerName = "wordpress"

const (
	portName      = "http"
	contentVolume = "wp-content"
	contentDir    = "/var/www/html/wp-content"
)

// SaltKeys are the authentication keys and salts wp-config.php reads from the environment; the
// image would otherwise make new ones at every start of every pod, logging every user out.
var SaltKeys = []string{
	"WORDPRESS_AUTH_KEY", "WORDPRESS_SECURE_AUTH_KEY", "WORDPRESS_LOGGED_IN_KEY", "WORDPRESS_NONCE_KEY",
	"WORDPRESS_AUTH_SALT", "WORDPRESS_SECURE_AUTH_SALT", "WORDPRESS_LOGGED_IN_SALT", "WORDPRESS_NONCE_SALT",
}

var gvk = appsv1alpha1.GroupVersion.WithKind("WordPress")

// GenerateSalts makes a random value for each salt key.
func GenerateSalts() map[string][]byte {
	salts := make(map[string][]byte, len(SaltKeys))
	for _, k := range SaltKeys {
		salts[k] = []byte(rand.Text() + rand.Text())
	}
	return salts
}

func labels(wp *appsv1alpha1.WordPress) map[string]string {
	return parts.Labels(wp.SelectorLabels(), appsv1alpha1.ManagedByValue)
}

// MySQL is the desired MySQL of a WordPress that runs its own: the spec given inline, with a
// database and a user named wordpress unless it names others. A site restored from a restore
// point has its MySQL load the point's database backup, which has the same name at every pass:
// a MySQL's spec.restore cannot change.
func MySQL(wp *appsv1alpha1.WordPress) *appsv1alpha1.MySQL {
	spec := wp.Spec.Database.MySQL.DeepCopy()
	if spec.Database == "" {
		spec.Database = appsv1alpha1.DefaultWordPressDatabase
	}
	if spec.User == "" {
		spec.User = appsv1alpha1.DefaultWordPressDatabase
	}
	if wp.Spec.Restore != nil {
		spec.Restore = &appsv1alpha1.MySQLRestore{BackupName: appsv1alpha1.DatabaseBackupName(wp.Spec.Restore.BackupName)}
	}
	return &appsv1alpha1.MySQL{
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "MySQL"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            wp.MySQLName(),
			Namespace:       wp.Namespace,
			Labels:          labels(wp),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(wp, gvk)},
		},
		Spec: *spec,
	}
}

// SaltsSecret is the desired Secret of salts, holding the given values.
func SaltsSecret(wp *appsv1alpha1.WordPress, salts map[string][]byte) *corev1ac.SecretApplyConfiguration {
	data := make(map[string][]byte, len(SaltKeys))
	for _, k := range SaltKeys {
		data[k] = salts[k]
	}
	return corev1ac.Secret(wp.SaltsSecretName(), wp.Namespace).
		WithLabels(labels(wp)).
		WithOwnerReferences(parts.ControllerReference(wp, gvk)).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
}

// ContentClaim is the desired PVC for wp-content. With the Retain policy it has no owner, so that
// uploads outlive the WordPress and a new one of the same name takes them over.
func ContentClaim(wp *appsv1alpha1.WordPress) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	st := wp.Spec.Storage
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(st.AccessModes...).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: st.Size}))
	if st.StorageClassName != nil {
		spec.WithStorageClassName(*st.StorageClassName)
	}
	pvc := corev1ac.PersistentVolumeClaim(wp.ContentClaimName(), wp.Namespace).
		WithLabels(labels(wp)).
		WithSpec(spec)
	if !wp.RetainsContent() {
		pvc.WithOwnerReferences(parts.ControllerReference(wp, gvk))
	}
	return pvc
}

// Service is the desired Service of a WordPress.
func Service(wp *appsv1alpha1.WordPress) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(wp.ChildName(), wp.Namespace).
		WithLabels(labels(wp)).
		WithOwnerReferences(parts.ControllerReference(wp, gvk)).
		WithSpec(parts.ServiceSpec(wp.Spec.Service, wp.SelectorLabels(), portName))
}

// Deployment is the desired Deployment of a WordPress using the MySQL db.
func Deployment(wp *appsv1alpha1.WordPress, db *appsv1alpha1.MySQL) *appsv1ac.DeploymentApplyConfiguration {
	selector := wp.SelectorLabels()
	strategy := appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)
	if shared(wp.Spec.Storage.AccessModes) {
		strategy = appsv1ac.DeploymentStrategy().
			WithType(appsv1.RollingUpdateDeploymentStrategyType).
			WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
				WithMaxUnavailable(intstr.FromInt32(0)).
				WithMaxSurge(intstr.FromString("25%")))
	}
	pod := corev1ac.PodSpec().
		// WordPress never calls the Kubernetes API: its pods get no token to leak.
		WithAutomountServiceAccountToken(false).
		// The image's Apache starts as root to bind port 80 and then drops to www-data: the pods
		// meet the baseline pod security standard, not the restricted one.
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(container(wp, db)).
		WithVolumes(corev1ac.Volume().
			WithName(contentVolume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(wp.ContentClaimName())))
	if shared(wp.Spec.Storage.AccessModes) {
		// Only replicas that can mount wp-content from any node may spread over nodes.
		parts.Schedule(pod, nil, nil, parts.SpreadOverNodes(selector))
	}
	return appsv1ac.Deployment(wp.ChildName(), wp.Namespace).
		WithLabels(labels(wp)).
		WithOwnerReferences(parts.ControllerReference(wp, gvk)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(wp.DesiredReplicas()).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			// A volume only one node can mount cannot be shared by an old and a new pod.
			WithStrategy(strategy).
			WithTemplate(corev1ac.PodTemplateSpec().
				// The managed-by label puts the pods in the operator's cache, which reads their status.
				WithLabels(labels(wp)).
				WithSpec(pod)))
}

// ContentShared is true when wp-content can be mounted from several nodes at once: a pod on a lost
// node then holds nothing a replacement needs.
func ContentShared(wp *appsv1alpha1.WordPress) bool {
	return shared(wp.Spec.Storage.AccessModes)
}

// shared is true when every replica can mount the volume at once.
func shared(modes []corev1.PersistentVolumeAccessMode) bool {
	for _, m := range modes {
		if m == corev1.ReadWriteMany {
			return true
		}
	}
	return false
}

func container(wp *appsv1alpha1.WordPress, db *appsv1alpha1.MySQL) *corev1ac.ContainerApplyConfiguration {
	c := parts.Container(ContainerName, wp.Spec.Image).
		WithEnv(env(wp, db)...).
		WithPorts(corev1ac.ContainerPort().WithName(portName).WithContainerPort(appsv1alpha1.WordPressPort).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(contentVolume).WithMountPath(contentDir)).
		WithSecurityContext(corev1ac.SecurityContext().WithAllowPrivilegeEscalation(false)).
		// The login page runs PHP and connects to the database: a pod that cannot reach it serves
		// only errors and takes no traffic.
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/wp-login.php").WithPort(intstr.FromString(portName))).
			WithPeriodSeconds(10).WithTimeoutSeconds(5)).
		WithLivenessProbe(corev1ac.Probe().
			WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(portName))).
			WithInitialDelaySeconds(30).WithPeriodSeconds(10))
	if args := apacheArgs(wp); args != nil {
		c.WithArgs(args...)
	}
	res := wp.Spec.Resources
	if len(res.Limits) > 0 || len(res.Requests) > 0 || len(res.Claims) > 0 {
		c.WithResources(parts.ApplyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](res))
	}
	return c
}

// env gives the container the database coordinates and every secret by reference: from the
// generated Secret of the MySQL, which carries all four, or, when the MySQL uses a Secret of the
// user's with passwords only, the password from it and the rest from the MySQL's spec.
func env(wp *appsv1alpha1.WordPress, db *appsv1alpha1.MySQL) []*corev1ac.EnvVarApplyConfiguration {
	fromSecret := func(name, secret, key string) *corev1ac.EnvVarApplyConfiguration {
		return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secret).WithKey(key)))
	}
	dbSecret := db.SecretName()
	var vars []*corev1ac.EnvVarApplyConfiguration
	if db.Spec.CredentialsSecretRef == nil {
		vars = append(vars,
			fromSecret("WORDPRESS_DB_HOST", dbSecret, appsv1alpha1.SecretKeyHost),
			fromSecret("WORDPRESS_DB_NAME", dbSecret, appsv1alpha1.SecretKeyDatabase),
			fromSecret("WORDPRESS_DB_USER", dbSecret, appsv1alpha1.SecretKeyUser))
	} else {
		vars = append(vars,
			corev1ac.EnvVar().WithName("WORDPRESS_DB_HOST").WithValue(db.Host()),
			corev1ac.EnvVar().WithName("WORDPRESS_DB_NAME").WithValue(db.Spec.Database),
			corev1ac.EnvVar().WithName("WORDPRESS_DB_USER").WithValue(db.Spec.User))
	}
	vars = append(vars, fromSecret("WORDPRESS_DB_PASSWORD", dbSecret, appsv1alpha1.SecretKeyPassword))
	for _, k := range SaltKeys {
		vars = append(vars, fromSecret(k, wp.SaltsSecretName(), k))
	}
	return vars
}
