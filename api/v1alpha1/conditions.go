package v1alpha1

// Condition types shared by every kind. Each is stamped with the generation it was computed for.
const (
	// ConditionAvailable is True when the application serves at the size the user asked for.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the application moves towards its spec (creating,
	// scaling, rolling out a new version).
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the application cannot reach its spec without help.
	ConditionDegraded = "Degraded"
)

// Condition types that summarise the three above for tools that judge the health of any resource
// (kstatus, on which Flux builds; kubectl wait; Argo CD health checks): they read Ready and
// Stalled, not Available, Progressing and Degraded. Both are derived from those three, never
// observed on their own.
const (
	// ConditionReady is True when the application is Available at its current spec, no rollout or
	// scale is under way and it is not Degraded. When it is not, its reason is the one of the
	// condition that keeps it from being Ready.
	ConditionReady = "Ready"
	// ConditionStalled is Degraded under the name kstatus reads: True, with Degraded's reason and
	// message, exactly when Degraded is True.
	ConditionStalled = "Stalled"
)

// A condition the operator cannot decide, because a read of a child or of the pods failed, is
// Unknown with ReasonReadFailed: a failed read is no evidence either way.
const ReasonReadFailed = "ReadFailed"

// Reasons of a Degraded condition that a pod calls for. They are the scheduler's and the kubelet's
// own reasons, passed on verbatim; the message names the pod and the container, then repeats the
// kubelet's or scheduler's message, e.g. "pod web-7d9c-x2x: container nginx: ImagePullBackOff:
// Back-off pulling image ...". When several pods fail, the first by name speaks and the message
// counts the others.
const (
	// ReasonUnschedulable: no node can take the pod (resources, selectors, taints, volumes).
	ReasonUnschedulable = "Unschedulable"
	// ReasonCrashLoopBackOff: a container keeps exiting; the kubelet restarts it with a back-off.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonImagePullBackOff and ReasonErrImagePull: the image cannot be pulled (wrong name or
	// tag, missing credentials, registry unreachable).
	ReasonImagePullBackOff = "ImagePullBackOff"
	ReasonErrImagePull     = "ErrImagePull"
	// ReasonErrImageNeverPull: the pull policy is Never and the node lacks the image.
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	// ReasonInvalidImageName: spec.image is not a valid image reference.
	ReasonInvalidImageName = "InvalidImageName"
	// ReasonCreateContainerConfigError: the container cannot be configured, e.g. a Secret or
	// ConfigMap key it reads is missing.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonCreateContainerError and ReasonRunContainerError: the runtime refuses to create or
	// start the container.
	ReasonCreateContainerError = "CreateContainerError"
	ReasonRunContainerError    = "RunContainerError"
)

// Reasons of a Degraded condition that name why a container keeps exiting, in place of
// CrashLoopBackOff, or which reference it lacks, in place of CreateContainerConfigError. The
// operator reads them from how the container last ended (the kubelet's reason and exit code) and
// from the last lines of its log; the message quotes the evidence, e.g. "pod shop-0: container
// mysql: BadConfiguration: it exited with code 7, refusing its configuration: "[ERROR] mariadbd:
// unknown variable 'no_such_option=1'" (restarts: 2)". A crash loop that fits none stays
// CrashLoopBackOff.
const (
	// ReasonOutOfMemory: the kernel killed the container for using more than its memory limit.
	ReasonOutOfMemory = "OutOfMemory"
	// ReasonDiskFull: the container exits because a volume it writes to is full.
	ReasonDiskFull = "DiskFull"
	// ReasonBadConfiguration: the server exits refusing a line of its configuration.
	ReasonBadConfiguration = "BadConfiguration"
	// ReasonProbeFailed: the container ended without an error of its own after running long
	// enough for its startup or liveness probe to fail: the kubelet stopped it.
	ReasonProbeFailed = "ProbeFailed"
	// ReasonSecretMissing and ReasonConfigMapMissing: a Secret or ConfigMap the container reads,
	// or a key of it, does not exist.
	ReasonSecretMissing    = "SecretMissing"
	ReasonConfigMapMissing = "ConfigMapMissing"
)

// ReasonNodeLost is the Degraded reason of a pod on a node whose kubelet stopped reporting (the
// node's Ready condition Unknown): the pod neither serves nor ends. The message names the pod, the
// node and since when, e.g. "pod web-7d9c-x2x: its node worker-3 has not reported since
// 2026-11-28T16:50:03Z".
const ReasonNodeLost = "NodeLost"

// Condition reasons shared by every kind.
const (
	ReasonAsExpected       = "AsExpected"
	ReasonCreating         = "Creating"
	ReasonScaledToZero     = "ScaledToZero"
	ReasonReplicasNotReady = "ReplicasNotReady"
	ReasonRollingOut       = "RollingOut"
	ReasonScaling          = "Scaling"
	ReasonRolloutComplete  = "RolloutComplete"
	ReasonProgressDeadline = "ProgressDeadlineExceeded"
	ReasonReplicaFailure   = "ReplicaFailure"
	ReasonReconcileFailed  = "ReconcileFailed"
	ReasonDowngradeRefused = "DowngradeRefused"
	ReasonClaimNotBound    = "ClaimNotBound"
	// ReasonNameConflict: a child's name is taken by an object this resource does not control;
	// the operator writes nothing to that object.
	ReasonNameConflict = "NameConflict"
	// ReasonCredentialsLost: the generated credentials Secret is gone while the data volume
	// initialized with its passwords remains; new passwords would lock the application out.
	ReasonCredentialsLost = "CredentialsLost"
	// ReasonInvalidSpec: the spec asks for something its children cannot do, in a way the API
	// server's checks cannot see; the children keep their last good spec.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonNoPrimary: no member of a MySQL cluster takes writes yet.
	ReasonNoPrimary = "NoPrimary"
	// ReasonFailoverBlocked: a cluster's primary failed, and no replica is promoted, since none
	// can be without losing an acknowledged write or none can be at all.
	ReasonFailoverBlocked = "FailoverBlocked"
	// ReasonErrantMember: a cluster member holds writes the primary never had, and is left out of
	// replication.
	ReasonErrantMember = "ErrantMember"
	// ReasonUnprotected: a cluster's primary, with durability Preferred, commits without waiting
	// for a replica, since none acknowledged within ackTimeout: a failover may lose those writes.
	ReasonUnprotected = "Unprotected"
	// ReasonWritesWaiting: a cluster's primary, with durability Required, has no replica that
	// acknowledges: every commit waits until one does.
	ReasonWritesWaiting = "WritesWaiting"
)

// Labels put on every child so that each instance has a selector of its own and the operator's
// cache holds only what it manages.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "appkeeper"
)

// Event reasons, one catalog for every kind.
const (
	EventCreated   = "Created"
	EventScaled    = "Scaled"
	EventUpgrading = "Upgrading"
	EventUpgraded  = "Upgraded"
	EventFailed    = "ReconcileFailed"
	EventReplaced  = "Replaced"
	// EventTuned: the settings a MySQL's tuning computes changed with its resources or profile.
	EventTuned = "Tuned"
	// EventPrimaryChosen: a cluster's first primary was chosen and opened to writes.
	EventPrimaryChosen = "PrimaryChosen"
	// EventFailedOver: a replica took over from a cluster's failed primary.
	EventFailedOver = "FailedOver"
	// EventMemberRebuilt: a cluster member that held writes the primary never had is rebuilt
	// from a copy of a healthy member.
	EventMemberRebuilt = "MemberRebuilt"
	// EventSwitchedOver: a cluster's primary handed its role to a replica, as asked.
	EventSwitchedOver = "SwitchedOver"
	// EventDrainWaiting: a cluster's primary is on a cordoned node, and no replica can take over.
	EventDrainWaiting = "DrainWaiting"
	// EventSwitchoverRefused: a switchover was asked for and not done.
	EventSwitchoverRefused = "SwitchoverRefused"
	// EventPromotedAcceptingDataLoss: a replica was promoted, as a person asked, while a replica
	// that may hold the last acknowledged write could not be read.
	EventPromotedAcceptingDataLoss = "PromotedAcceptingDataLoss"
	// EventAcksLost: a cluster's primary held commits for an acknowledgement its replicas had
	// already given, lost when their connections broke; the sessions that waited were ended.
	EventAcksLost = "AcksLost"
	// EventPromoteRefused: a promotion accepting data loss was asked for while no failover was
	// blocked; nothing changed.
	EventPromoteRefused = "PromoteRefused"
	// EventNameConflict and EventCredentialsLost are Warnings, recorded once when the condition
	// of the same reason appears.
	EventNameConflict    = ReasonNameConflict
	EventCredentialsLost = ReasonCredentialsLost
	// EventWedgedPodDeleted: a StatefulSet member of an older revision that is not Ready was
	// deleted so that the StatefulSet recreates it from the current spec.
	EventWedgedPodDeleted = "WedgedPodDeleted"
	// EventLostNodePodDeleted: a pod on a node lost for a while, which held its name or would stay
	// until its eviction, was deleted so that it starts again on a node that runs.
	EventLostNodePodDeleted = "LostNodePodDeleted"
	// EventMissedSchedule is a Warning on a MySQL whose backup schedule passed times without
	// starting a backup, such as while the operator was down; only the latest is run.
	EventMissedSchedule = "MissedSchedule"
)
