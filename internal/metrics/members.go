package metrics

import (
	dto "github.com/prometheus/client_model/go"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// rolePairs are the role label's pairs by member role, built once for all members.
var rolePairs = map[appsv1alpha1.MemberRole]*dto.LabelPair{
	appsv1alpha1.RolePrimary: labelPair("role", "primary"),
	appsv1alpha1.RoleReplica: labelPair("role", "replica"),
	appsv1alpha1.RoleUnknown: labelPair("role", "unknown"),
}

// rolePair is the role label of r: a role written by a newer operator than this one reads as
// unknown rather than as a value the alerts and dashboards do not expect.
func rolePair(r appsv1alpha1.MemberRole) *dto.LabelPair {
	if p, ok := rolePairs[r]; ok {
		return p
	}
	return rolePairs[appsv1alpha1.RoleUnknown]
}

// withMember is the resource's labels with member, which sorts between kind and name, and role,
// which sorts after namespace and may be nil.
func (p resourcePairs) withMember(member, role *dto.LabelPair) []*dto.LabelPair {
	out := make([]*dto.LabelPair, 0, len(p)+2)
	out = append(out, p[0], member)
	out = append(out, p[1:]...)
	if role != nil {
		out = append(out, role)
	}
	return out
}

// emitMembers emits the series of a MySQL cluster's members and its primary's epoch, from its
// status alone: the members as the operator last read them (a single server has none); and those
// of a MySQL's binary log archive, as the operator last read its shipper.
func (e emitter) emitMembers(in *instance, pairs resourcePairs) {
	for i := range in.members {
		m := &in.members[i]
		member := labelPair("member", m.Name)
		e.gauge(memberRoleDesc, 1, pairs.withMember(member, rolePair(m.Role)))
		if m.LagSeconds != nil {
			e.gauge(memberLagDesc, float64(*m.LagSeconds), pairs.withMember(member, nil))
		}
		if m.Role == appsv1alpha1.RolePrimary && m.AcknowledgingReplicas != nil {
			e.gauge(acknowledgingDesc, float64(*m.AcknowledgingReplicas), pairs)
			alone := 0.0
			if m.CommitsAlone {
				alone = 1
			}
			e.gauge(commitsAloneDesc, alone, pairs)
		}
	}
	if in.epoch > 0 {
		e.gauge(primaryEpochDesc, float64(in.epoch), pairs)
	}
	if a := in.archive; a != nil {
		e.gauge(archiveLagDesc, float64(a.LagSeconds), pairs)
		recoverable := 0.0
		if a.Message == "" && a.RecoverableFrom != nil {
			recoverable = 1
		}
		e.gauge(archiveRecoverableDesc, recoverable, pairs)
	}
}
