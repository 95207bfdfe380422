package kubectlplugin

import (
	"fmt"
	"strings"
	"time"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// mysqlFacts are what a MySQL's status line adds to its health: the primary of a cluster and
// its epoch, the members that are errant, and the window a point-in-time restore can reach.
func mysqlFacts(m *appsv1alpha1.MySQL) []string {
	var facts []string
	if m.MemberCount() > 1 && m.Status.Primary != "" {
		facts = append(facts, fmt.Sprintf("primary %s (epoch %d)", m.Status.Primary, m.Status.Epoch))
	}
	for _, member := range m.Status.Members {
		if member.Errant {
			facts = append(facts, member.Name+" errant")
		}
	}
	if p := m.Status.PointInTimeRecovery; p != nil {
		facts = append(facts, recoverableWords(p))
	}
	return facts
}

// recoverableWords says what a point-in-time restore of the archive can reach now, or why it
// can reach nothing.
func recoverableWords(p *appsv1alpha1.PointInTimeRecoveryStatus) string {
	if p.Message != "" {
		return "point-in-time recovery: " + shorten(p.Message)
	}
	if p.RecoverableFrom == nil || p.RecoverableTo == nil {
		return "point-in-time recovery: no window yet"
	}
	words := fmt.Sprintf("recoverable from %s to %s", p.RecoverableFrom.UTC().Format(time.RFC3339), p.RecoverableTo.UTC().Format(time.RFC3339))
	if p.LagSeconds > 0 {
		words += fmt.Sprintf(", archive %s behind", time.Duration(p.LagSeconds)*time.Second)
	}
	return words
}

// memberWords is what a MySQL member's pod adds to its health in a tree: its role as the
// operator last read it, a replica's lag, and what is wrong with it.
func memberWords(member appsv1alpha1.MySQLMemberStatus) string {
	words := []string{strings.ToLower(string(member.Role))}
	if member.Role == appsv1alpha1.RoleReplica && member.LagSeconds != nil {
		words[0] += fmt.Sprintf(" %s behind", time.Duration(*member.LagSeconds)*time.Second)
	}
	if member.Errant {
		words = append(words, "errant")
	}
	if member.Message != "" {
		words = append(words, shorten(member.Message))
	}
	return strings.Join(words, ", ")
}

// describe is an instance's health followed by the facts of its kind.
func describe(i instance) string {
	return strings.Join(append([]string{health(i)}, i.facts...), "; ")
}
