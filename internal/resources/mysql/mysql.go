// Package mysql builds the children of a MySQL: its StatefulSet, its headless and client
// Services, the ConfigMap with my.cnf and the generated credentials Secret.
package mysql

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ContainerName is the name of the mysqld container.
const ContainerName = "mysql"

// ConfigHashAnnotation on the pod template carries the hash of my.cnf, so that a change of
// spec.config restarts the server with it.
const ConfigHashAnnotation = "apps.appkeeper.dev/config-hash"

// DataImageAnnotation on the data PVC names the newest image whose server has run on it: mysqld
// upgrades data files in place, and no older version can read them afterwards.
const DataImageAnnotation = "apps.appkeeper.dev/data-image"

// DataVolume is the name of the volume claim template, and so the prefix of the PVC's name.
const DataVolume = "data"

const (
	portName   = "mysql"
	configFile = "appkeeper.cnf"
	configDir  = "/etc/mysql/conf.d"
	dataDir    = "/var/lib/mysql"
	// accountsDir holds the SQL that mysqld runs at every start (init-file), from a Secret: it
	// creates the backup account and sets its password.
	accountsDir    = "/etc/mysql/appkeeper"
	accountsVolume = "backup-account"
	initdbDir      = "/docker-entrypoint-initdb.d"
)

// AccountsFile is the key of the backup account Secret that holds the init-file's SQL.
const AccountsFile = "accounts.sql"

var gvk = appsv1alpha1.GroupVersion.WithKind("MySQL")

// MyCnf is the my.cnf the server reads: settings that suit a server in a pod, those tuned from its
// resources, then the user's lines.
func MyCnf(m *appsv1alpha1.MySQL) string {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	// Clients connect from pod IPs that have no stable reverse DNS.
	b.WriteString("skip-name-resolve\n")
	// Every start, mysqld itself makes sure the backup account exists with the Secret's password:
	// no client can create it, as root connects only from the pod's own loopback.
	b.WriteString("init-file=" + accountsDir + "/" + AccountsFile + "\n")
	if m.Clustered() {
		b.WriteString(clusterCnf())
	} else if m.Spec.Backup.PointInTimeRecoveryEnabled() {
		b.WriteString(binlogCnf())
	}
	b.WriteString(tunedCnf(m))
	for _, line := range m.Spec.Config {
		b.WriteString(strings.TrimSpace(line))
		b.WriteString("\n")
	}
	return b.String()
}

// ConfigHash identifies a my.cnf.
func ConfigHash(cnf string) string {
	sum := sha256.Sum256([]byte(cnf))
	return hex.EncodeToString(sum[:8])
}

// ConfigMap is the desired ConfigMap holding my.cnf.
func ConfigMap(m *appsv1alpha1.MySQL) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(m.ConfigMapName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithData(map[string]string{configFile: MyCnf(m)})
}

// Secret is the desired generated credentials Secret, holding the given passwords. With the Retain
// policy it has no owner, so that it outlives the MySQL and a new MySQL of the same name finds the
// password that matches the data.
func Secret(m *appsv1alpha1.MySQL, rootPassword, password []byte) *corev1ac.SecretApplyConfiguration {
	data := map[string][]byte{
		appsv1alpha1.SecretKeyRootPassword: rootPassword,
		appsv1alpha1.SecretKeyPassword:     password,
		appsv1alpha1.SecretKeyHost:         []byte(m.Host()),
		appsv1alpha1.SecretKeyPort:         []byte(strconv.Itoa(appsv1alpha1.MySQLPort)),
	}
	if m.Spec.User != "" {
		data[appsv1alpha1.SecretKeyUser] = []byte(m.Spec.User)
	}
	if m.Spec.Database != "" {
		data[appsv1alpha1.SecretKeyDatabase] = []byte(m.Spec.Database)
	}
	s := corev1ac.Secret(m.GeneratedSecretName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
	if !m.RetainsData() {
		s.WithOwnerReferences(parts.ControllerReference(m, gvk))
	}
	return s
}

// HeadlessService is the StatefulSet's governing Service, which gives the server pod its DNS name.
func HeadlessService(m *appsv1alpha1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return service(m, m.HeadlessServiceName()).WithSpec(servicePorts(m).
		WithClusterIP(corev1.ClusterIPNone).
		WithPublishNotReadyAddresses(true))
}

// Service is the client Service applications connect to; it reaches the server once it is ready,
// and in a cluster the primary alone.
func Service(m *appsv1alpha1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return service(m, m.ChildName()).WithSpec(servicePorts(m).
		WithSelector(clientSelector(m)).
		WithType(corev1.ServiceTypeClusterIP))
}

func service(m *appsv1alpha1.MySQL, name string) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(name, m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk))
}

func servicePorts(m *appsv1alpha1.MySQL) *corev1ac.ServiceSpecApplyConfiguration {
	return corev1ac.ServiceSpec().
		WithSelector(m.SelectorLabels()).
		WithPorts(corev1ac.ServicePort().
			WithName(portName).
			WithProtocol(corev1.ProtocolTCP).
			WithPort(appsv1alpha1.MySQLPort).
			WithTargetPort(intstr.FromString(portName)))
}

// StatefulSet is the desired StatefulSet of a MySQL, one pod per member. Its claim template makes the
// data PVC; the retention policy hands that PVC to the garbage collector only under the Delete policy.
// With restore, the pod loads a backup before the server first accepts connections. A cluster's
// members copy data between them with the appkeeper binary of toolsImage.
func StatefulSet(m *appsv1alpha1.MySQL, restore *Restore, toolsImage string) *appsv1ac.StatefulSetApplyConfiguration {
	selector := m.SelectorLabels()
	labels := parts.Labels(selector, appsv1alpha1.ManagedByValue)
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if !m.RetainsData() {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	claim := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithVolumeMode(corev1.PersistentVolumeFilesystem).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: m.Spec.Storage.Size}))
	if m.Spec.Storage.StorageClassName != nil {
		claim.WithStorageClassName(*m.Spec.Storage.StorageClassName)
	}
	spec := appsv1ac.StatefulSetSpec()
	if m.Clustered() {
		// A member that does not start must not hold the others back: each is its own server.
		// The operator replaces members of an older revision itself, replicas first and the
		// primary last, after it handed its role over: the StatefulSet's own order would
		// restart the primary whatever its ordinal.
		spec.WithPodManagementPolicy(appsv1.ParallelPodManagement).
			WithUpdateStrategy(appsv1ac.StatefulSetUpdateStrategy().WithType(appsv1.OnDeleteStatefulSetStrategyType))
	}
	return appsv1ac.StatefulSet(m.ChildName(), m.Namespace).
		WithLabels(labels).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithSpec(spec.
			WithReplicas(m.MemberCount()).
			WithServiceName(m.HeadlessServiceName()).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
				WithWhenDeleted(whenDeleted).
				// A removed member's volume goes as the deletion policy says of the MySQL's.
				WithWhenScaled(whenDeleted)).
			WithVolumeClaimTemplates(claimTemplate(labels, claim)).
			WithTemplate(podTemplate(m, labels, restore, toolsImage)))
}

// claimTemplate is the data volume's claim template as the API server keeps it: a list of
// templates is owned whole by whoever applied it, so the defaults the server fills in (the volume
// mode, the Pending phase) are part of what was applied, and a template without them would never
// compare equal and would be sent again at every pass. Nor does the server keep a kind on it.
func claimTemplate(labels map[string]string, spec *corev1ac.PersistentVolumeClaimSpecApplyConfiguration) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	template := &corev1ac.PersistentVolumeClaimApplyConfiguration{}
	return template.
		WithName(DataVolume).
		WithLabels(labels).
		WithSpec(spec).
		WithStatus(corev1ac.PersistentVolumeClaimStatus().WithPhase(corev1.ClaimPending))
}

func podTemplate(m *appsv1alpha1.MySQL, labels map[string]string, restore *Restore, toolsImage string) *corev1ac.PodTemplateSpecApplyConfiguration {
	spec := m.Spec
	pod := corev1ac.PodSpec().
		// mysqld never calls the Kubernetes API: its pods get no token to leak.
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(appsv1alpha1.MySQLUser).
			WithRunAsGroup(appsv1alpha1.MySQLUser).
			// The data volume is writable by the mysql group whatever the provisioner made it.
			WithFSGroup(appsv1alpha1.MySQLUser).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		// mysqld flushes its buffers on SIGTERM; a large buffer pool needs more than the default 30 s.
		WithTerminationGracePeriodSeconds(60).
		WithVolumes(corev1ac.Volume().
			WithName("config").
			WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(m.ConfigMapName())),
			accountsVolumeSource(m))
	server := container(m)
	if m.Clustered() {
		// Before the restore's fetch, which does nothing on a data folder a copy initialised.
		withSeeding(pod, m, toolsImage)
	}
	if restore != nil {
		pod.WithInitContainers(restore.Containers...).WithVolumes(restore.Volumes...)
		server.WithVolumeMounts(restore.Mount)
	}
	pod.WithContainers(server)
	if m.Clustered() {
		pod.WithContainers(donor(m))
	}
	if c, volume := exporter(m); c != nil {
		pod.WithContainers(c).WithVolumes(volume)
	}
	if spec.Backup.PointInTimeRecoveryEnabled() {
		withShipper(pod, m, toolsImage)
	}
	parts.Schedule(pod, spec.NodeSelector, spec.Tolerations, affinity(m))
	return corev1ac.PodTemplateSpec().
		WithLabels(labels).
		WithAnnotations(map[string]string{ConfigHashAnnotation: ConfigHash(MyCnf(m))}).
		WithSpec(pod)
}

// Probe commands. The password reaches the client through MYSQL_PWD, never the command line, and
// the TCP connection to 127.0.0.1 fails while the image's first-start initialisation runs mysqld
// without networking. The clients connect to port 3306 unless MYSQL_TCP_PORT says otherwise.
var (
	// ReadinessCommand runs a query as root: the server accepts connections, authenticates and executes.
	ReadinessCommand = []string{"sh", "-c", `MYSQL_PWD="$MYSQL_ROOT_PASSWORD" exec mysql --protocol=TCP -h 127.0.0.1 -u root -N -e 'SELECT 1'`}
	// LivenessCommand succeeds whenever mysqld answers, even refusing the login: a server busy or
	// with changed passwords is alive and must not be restarted.
	LivenessCommand = []string{"sh", "-c", `exec mysqladmin --protocol=TCP -h 127.0.0.1 ping`}
)

func container(m *appsv1alpha1.MySQL) *corev1ac.ContainerApplyConfiguration {
	spec := m.Spec
	exec := func(cmd []string) *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().WithExec(corev1ac.ExecAction().WithCommand(cmd...)).WithTimeoutSeconds(5)
	}
	c := parts.Container(ContainerName, spec.Image).
		WithEnv(env(m)...).
		WithPorts(corev1ac.ContainerPort().WithName(portName).WithContainerPort(appsv1alpha1.MySQLPort).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName(DataVolume).WithMountPath(dataDir),
			corev1ac.VolumeMount().WithName("config").WithMountPath(configDir+"/"+configFile).WithSubPath(configFile).WithReadOnly(true),
			corev1ac.VolumeMount().WithName(accountsVolume).WithMountPath(accountsDir).WithReadOnly(true)).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.SecurityContextApplyConfiguration](parts.RestrictedSecurityContext())).
		// The first start initialises the data directory, which takes a minute or more on slow disks.
		WithStartupProbe(exec(LivenessCommand).WithPeriodSeconds(5).WithFailureThreshold(60)).
		WithLivenessProbe(exec(LivenessCommand).WithPeriodSeconds(10).WithFailureThreshold(3)).
		WithReadinessProbe(exec(ReadinessCommand).WithPeriodSeconds(5).WithFailureThreshold(2))
	if m.Clustered() {
		// The entrypoint passes flags to mysqld; the server_id follows the member's ordinal.
		c.WithArgs(serverIDFlag)
	}
	if len(spec.Resources.Limits) > 0 || len(spec.Resources.Requests) > 0 || len(spec.Resources.Claims) > 0 {
		c.WithResources(parts.ApplyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](spec.Resources))
	}
	return c
}

// RootHost is the only host root may connect from besides the socket: the pod's own loopback, which
// the probes use. The image's entrypoint creates root@localhost and root@RootHost at first start,
// rather than root@'%' that any pod of the cluster could try passwords against.
const RootHost = "127.0.0.1"

// env passes the passwords only by reference to the Secret; the image's entrypoint creates the
// root account, the database and the user from them when the data directory is empty.
func env(m *appsv1alpha1.MySQL) []*corev1ac.EnvVarApplyConfiguration {
	fromSecret := func(name, key string) *corev1ac.EnvVarApplyConfiguration {
		return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(m.SecretName()).WithKey(key)))
	}
	vars := []*corev1ac.EnvVarApplyConfiguration{
		fromSecret("MYSQL_ROOT_PASSWORD", appsv1alpha1.SecretKeyRootPassword),
		corev1ac.EnvVar().WithName("MYSQL_ROOT_HOST").WithValue(RootHost),
	}
	if m.Clustered() {
		vars = append(vars, corev1ac.EnvVar().WithName(memberOrdinalVar).WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath("metadata.labels['"+appsv1.PodIndexLabel+"']"))))
	}
	if m.Spec.Database != "" {
		vars = append(vars, corev1ac.EnvVar().WithName("MYSQL_DATABASE").WithValue(m.Spec.Database))
	}
	if m.Spec.User != "" {
		vars = append(vars,
			corev1ac.EnvVar().WithName("MYSQL_USER").WithValue(m.Spec.User),
			fromSecret("MYSQL_PASSWORD", appsv1alpha1.SecretKeyPassword))
	}
	return vars
}

// Image is the image of the mysqld container in a StatefulSet, or empty.
func Image(sts *appsv1.StatefulSet) string {
	if sts == nil {
		return ""
	}
	return parts.ContainerImage(&sts.Spec.Template, ContainerName)
}
