//go:build real

package real

import (
	"testing"
	"time"
)

// A MySQL of one server that holds rows grows to three members: the server restarts once and
// becomes the primary, the new members start from a copy of its data, every member holds every
// row acknowledged before and after, and the writes go on through the same client Service.
func TestMySQLClusterGrowsFromOneServer(t *testing.T) {
	c, _ := newLedger(t, "grow", 1)
	w := c.startWriter(t)
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

	w = c.startWriter(t)
	c.waitForAcks(w, 100)
	after := w.Stop()
	c.issued = after.Issued
	c.checkEveryMember(c.waitWhole(0), after)
}
