package mysql

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
	"github.com/appkeeper/appkeeper/internal/seed"
)

const (
	toolsVolume = "appkeeper-tools"
	toolsDir    = "/appkeeper-tools"
	planVolume  = "seed-plan"
	planDir     = "/etc/appkeeper/seed"
	// DonorContainer serves copies of a member's data to the other members.
	DonorContainer = "donor"
	// SeedContainer gives a member with no data, or data to rebuild, a copy of another's.
	SeedContainer  = "seed"
	toolsContainer = "appkeeper-tools"
	donorPortName  = "seed"
	podNameVar     = "POD_NAME"
)

// SeedPlan is the ConfigMap the members' seed containers read: the primary, the member to copy
// from, and the rebuild requests by member. Members read it at their start only.
func SeedPlan(m *appsv1alpha1.MySQL, primary, donor string, rebuilds map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	data := map[string]string{seed.PlanPrimary: primary, seed.PlanDonor: donor}
	for member, request := range rebuilds {
		data[seed.PlanRebuildKey(member)] = request
	}
	return corev1ac.ConfigMap(m.SeedPlanName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithData(data)
}

// Rebuilds are the rebuild requests a seed plan holds, by member.
func Rebuilds(plan *corev1.ConfigMap) map[string]string {
	rebuilds := map[string]string{}
	if plan == nil {
		return rebuilds
	}
	for key, value := range plan.Data {
		if member, ok := strings.CutPrefix(key, seed.PlanRebuildKey("")); ok {
			rebuilds[member] = value
		}
	}
	return rebuilds
}

const appkeeperTool = toolsDir + "/appkeeper"

func toolsMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(toolsVolume).WithMountPath(toolsDir)
}

func configMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName("config").WithMountPath(configDir + "/" + configFile).WithSubPath(configFile).WithReadOnly(true)
}

func restricted() *corev1ac.SecurityContextApplyConfiguration {
	return parts.ApplyConfiguration[corev1ac.SecurityContextApplyConfiguration](parts.RestrictedSecurityContext())
}

// withSeeding adds to a cluster member's pod the init containers that give it data: one installs
// the appkeeper binary from toolsImage, the next copies another member's data before the server
// starts, when the member has none or is to be rebuilt.
func withSeeding(pod *corev1ac.PodSpecApplyConfiguration, m *appsv1alpha1.MySQL, toolsImage string) {
	pod.WithVolumes(
		corev1ac.Volume().WithName(toolsVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		// Optional: a member starts before the operator has written the plan of a new cluster.
		corev1ac.Volume().WithName(planVolume).WithConfigMap(corev1ac.ConfigMapVolumeSource().
			WithName(m.SeedPlanName()).WithOptional(true)))
	pod.WithInitContainers(
		parts.Container(toolsContainer, toolsImage).
			WithCommand("/appkeeper", "backup", "install", appkeeperTool).
			WithVolumeMounts(toolsMount()).
			WithSecurityContext(restricted()),
		parts.Container(SeedContainer, m.Spec.Image).
			WithCommand(appkeeperTool, "member", seed.CommandSeed, "--data-dir="+dataDir, "--plan="+planDir,
				"--peers="+m.HeadlessServiceName()+"."+m.Namespace+".svc", "--name=$("+podNameVar+")").
			WithEnv(clusterSecretEnv(m, seed.EnvSecret),
				corev1ac.EnvVar().WithName(podNameVar).WithValueFrom(corev1ac.EnvVarSource().
					WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath("metadata.name"))),
				corev1ac.EnvVar().WithName(seed.EnvRootPassword).WithValueFrom(corev1ac.EnvVarSource().
					WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(m.SecretName()).WithKey(appsv1alpha1.SecretKeyRootPassword)))).
			WithVolumeMounts(corev1ac.VolumeMount().WithName(DataVolume).WithMountPath(dataDir), configMount(), toolsMount(),
				corev1ac.VolumeMount().WithName(accountsVolume).WithMountPath(accountsDir).WithReadOnly(true),
				corev1ac.VolumeMount().WithName(planVolume).WithMountPath(planDir).WithReadOnly(true)).
			WithSecurityContext(restricted()))
}

// donor serves copies of the member's data beside its server, to the members that prove they hold
// the replication account's password.
func donor(m *appsv1alpha1.MySQL) *corev1ac.ContainerApplyConfiguration {
	return parts.Container(DonorContainer, m.Spec.Image).
		WithCommand(appkeeperTool, "member", seed.CommandDonate, "--data-dir="+dataDir, "--user="+ClusterUser).
		WithEnv(clusterSecretEnv(m, seed.EnvSecret), clusterSecretEnv(m, "MYSQL_PWD")).
		WithPorts(corev1ac.ContainerPort().WithName(donorPortName).WithContainerPort(seed.DonorPort).WithProtocol(corev1.ProtocolTCP)).
		// mariadb-backup reads the server's files and never writes them.
		WithVolumeMounts(corev1ac.VolumeMount().WithName(DataVolume).WithMountPath(dataDir).WithReadOnly(true), configMount(), toolsMount()).
		WithSecurityContext(restricted())
}

func clusterSecretEnv(m *appsv1alpha1.MySQL, name string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(m.ClusterAccountSecretName()).WithKey(appsv1alpha1.SecretKeyPassword).
			WithOptional(false)))
}
