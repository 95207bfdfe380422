//go:build real

package real

import (
	"testing"
	"time"
)

// A MySQL of one server that holds rows grows to three members: the server restarts once and
// becomes the primary, the new members start from a copy of its data, every member holds every
// row acknowledged before and after, and the writes go on through the same client Service. Then
// it shrinks to two while the highest member is primary: the primary's role moves to a member
// that stays before the highest goes, and nothing acknowledged is lost.
func TestMySQLClusterGrowsFromOneServerAndShrinks(t *testing.T) {
	c, _ := newLedger(t, "grow", 1)
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 200)
	before := w.Stop()
	c.issued = before.Issued

	grown := time.Now()
	kubectl(t, "", "patch", "-n", c.ns, "mysql", "ledger", "--type", "merge", "-p", `{"spec":{"members":3}}`)
	m := c.waitWhole(0)
	if m.Status.Primary != "ledger-0" || m.Status.Epoch != 1 {
		t.Errorf("primary %s, epoch %d after growing: want the server that held the data, ledger-0, as the first primary", m.Status.Primary, m.Status.Epoch)
	}
	t.Logf("one server grew to 3 members, whole %s after the patch", time.Since(grown).Round(time.Second))
	c.checkEveryMember(m, before)

	w = c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	after := w.Stop()
	c.issued = after.Issued
	c.checkEveryMember(c.waitWhole(0), after)

	kubectlAppkeeper(t, "-n", c.ns, "switchover", "mysql/ledger", "--to", "ledger-2")
	m = c.waitWhole(1)
	w = c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	kubectl(t, "", "patch", "-n", c.ns, "mysql", "ledger", "--type", "merge", "-p", `{"spec":{"members":2}}`)
	m = c.waitWhole(m.Status.Epoch)
	c.waitForAcks(w, 100)
	shrunk := w.Stop()
	c.issued = shrunk.Issued
	if m.Status.Primary == "ledger-2" || len(m.Status.Members) != 2 {
		t.Fatalf("primary %s, members %+v after shrinking to 2: want ledger-2 gone", m.Status.Primary, m.Status.Members)
	}
	t.Logf("shrunk to 2 members, %s primary; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		m.Status.Primary, len(shrunk.Acked), len(shrunk.InDoubt), shrunk.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(m, shrunk)
}
