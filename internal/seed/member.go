package seed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Names in a member's data folder.
const (
	// SeededFile holds the rebuild request the data was last copied for.
	SeededFile = "appkeeper-seeded"
	// ErrantPrefix starts the names of the binary logs a rebuilt member held, kept for a person
	// to read the transactions the cluster went on without.
	ErrantPrefix = "appkeeper-errant-"
	stagingDir   = ".appkeeper-seed"
	lostAndFound = "lost+found"
	// systemSchema exists once a data folder has been initialised.
	systemSchema = "mysql"
	// binlogInfo is where mariadb-backup writes the position the copy holds.
	binlogInfo = "xtrabackup_binlog_info"
)

// copyMetadata are the files mariadb-backup adds to a copy, which the server has no use for.
var copyMetadata = []string{"backup-my.cnf", "xtrabackup_"}

// Plan is what the operator asks of a member's data, as its init container finds it.
type Plan struct {
	// Primary is the recorded primary; empty before the first is chosen.
	Primary string
	// Donor is the member the operator would have members copy from.
	Donor string
	// Rebuild, when it differs from the request the data was last copied for, asks for the data
	// to be replaced by a copy.
	Rebuild string
}

// Planned file names in the plan's folder: a ConfigMap mounted whole.
const (
	PlanPrimary       = "primary"
	PlanDonor         = "donor"
	planRebuildPrefix = "rebuild."
)

// PlanRebuildKey is the plan's key for the rebuild request of member.
func PlanRebuildKey(member string) string { return planRebuildPrefix + member }

// ReadPlan reads member's plan from dir; a missing folder or file is an empty value.
func ReadPlan(dir, member string) (Plan, error) {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return strings.TrimSpace(string(b)), err
	}
	var p Plan
	var errs [3]error
	p.Primary, errs[0] = read(PlanPrimary)
	p.Donor, errs[1] = read(PlanDonor)
	p.Rebuild, errs[2] = read(PlanRebuildKey(member))
	return p, errors.Join(errs[:]...)
}

// Member is a member's data folder and the tools that seed it.
type Member struct {
	// Name is the member's pod name, <instance>-<ordinal>.
	Name    string
	DataDir string
	// BinlogBase is the binary log's base name in DataDir.
	BinlogBase string
	// DonorAddress is where the donor beside member listens.
	DonorAddress func(member string) string
	Secret       []byte
	// Unpack unpacks a copy read on its standard input into dir; Prepare makes the copy in dir
	// consistent.
	Unpack, Prepare func(ctx context.Context, dir string) *exec.Cmd
	// Position makes the server on the data in dir start replicating after gtid.
	Position func(ctx context.Context, dir, gtid string) error
	// Plan reads the plan again before each try, as the operator may have moved the donor.
	Plan func() (Plan, error)
	Log  *slog.Logger
	// Retry is the longest pause between two tries to copy.
	Retry time.Duration
}

// firstMember is the member of ordinal 0 of member's instance.
func firstMember(member string) string {
	return member[:strings.LastIndex(member, "-")+1] + "0"
}

// source is the member to copy from, or empty when the data is to be kept as it is.
func source(self string, plan Plan, initialized bool, seededFor string) (string, error) {
	switch {
	case initialized && (plan.Rebuild == "" || plan.Rebuild == seededFor):
		return "", nil
	case !initialized && plan.Primary == "" && plan.Donor == "" && self == firstMember(self):
		// A new cluster: the first member's server initialises its data, and the others copy it.
		return "", nil
	}
	for _, candidate := range []string{plan.Donor, plan.Primary, firstMember(self)} {
		if candidate != "" && candidate != self {
			return candidate, nil
		}
	}
	return "", errors.New("the plan names no other member to copy from")
}

// Seed gives the member its data: it keeps data of its own unless the plan asks to rebuild it,
// and otherwise copies another member's, retrying until ctx ends.
func (m *Member) Seed(ctx context.Context) error {
	plan, err := m.Plan()
	if err != nil {
		return err
	}
	initialized := exists(filepath.Join(m.DataDir, systemSchema))
	seededFor, _ := os.ReadFile(filepath.Join(m.DataDir, SeededFile))
	from, err := source(m.Name, plan, initialized, strings.TrimSpace(string(seededFor)))
	if err != nil || from == "" {
		if err == nil {
			m.Log.Info("the member keeps its data", "initialized", initialized)
		}
		return err
	}
	if initialized {
		kept, err := m.keepBinlogs(plan.Rebuild)
		if err != nil {
			return err
		}
		m.Log.Info("rebuilding the member's data; its binary logs are kept", "request", plan.Rebuild, "kept", kept)
	}
	if err := m.clear(); err != nil {
		return err
	}
	wait := time.Second
	for {
		err := m.copyFrom(ctx, from, plan.Rebuild)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		m.Log.Info("could not copy the data; trying again", "donor", from, "error", err.Error(), "after", wait.String())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, m.Retry)
		if next, err := m.Plan(); err == nil {
			plan.Donor, plan.Primary = next.Donor, next.Primary
			if again, err := source(m.Name, plan, false, ""); err == nil && again != "" {
				from = again
			}
		}
	}
}

// copyFrom copies donor's data into the staging folder, prepares it, positions it and moves it
// into place, the system schema last: until it is there, the data folder counts as empty and a
// restarted init container starts over.
func (m *Member) copyFrom(ctx context.Context, donor, request string) error {
	began := time.Now()
	staging := filepath.Join(m.DataDir, stagingDir)
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	if err := os.Mkdir(staging, 0o750); err != nil {
		return err
	}
	if err := fetch(ctx, m.DonorAddress(donor), m.Secret, m.Unpack(ctx, staging)); err != nil {
		return fmt.Errorf("receive from %s: %w", donor, err)
	}
	if out, err := m.Prepare(ctx, staging).CombinedOutput(); err != nil {
		return fmt.Errorf("prepare the copy from %s: %w: %s", donor, err, lastLines(out, 5))
	}
	gtid, err := copiedPosition(staging)
	if err != nil {
		return err
	}
	for _, name := range copyMetadata {
		matches, _ := filepath.Glob(filepath.Join(staging, name+"*"))
		for _, f := range matches {
			_ = os.Remove(f)
		}
	}
	if err := m.Position(ctx, staging, gtid); err != nil {
		return fmt.Errorf("record the copied position %q: %w", gtid, err)
	}
	if err := os.WriteFile(filepath.Join(m.DataDir, SeededFile), []byte(request+"\n"), 0o640); err != nil {
		return err
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
		return boolOrder(a.Name() == systemSchema, b.Name() == systemSchema)
	})
	for _, e := range entries {
		if err := os.Rename(filepath.Join(staging, e.Name()), filepath.Join(m.DataDir, e.Name())); err != nil {
			return err
		}
	}
	m.Log.Info("copied the data of another member", "donor", donor, "position", gtid, "duration", time.Since(began).Round(time.Millisecond).String())
	return os.Remove(staging)
}

// keepBinlogs renames the binary logs out of the server's way, under a name that says which
// rebuild set them aside.
func (m *Member) keepBinlogs(request string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(m.DataDir, m.BinlogBase+".*"))
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, f := range matches {
		to := filepath.Join(m.DataDir, ErrantPrefix+request+"-"+filepath.Base(f))
		if err := os.Rename(f, to); err != nil {
			return kept, err
		}
		kept = append(kept, filepath.Base(to))
	}
	return kept, nil
}

// clear removes what the data folder holds, except the folder a file system keeps for itself
// and the binary logs kept from earlier rebuilds.
func (m *Member) clear() error {
	entries, err := os.ReadDir(m.DataDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == lostAndFound || strings.HasPrefix(e.Name(), ErrantPrefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(m.DataDir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// copiedPosition is the GTID position a prepared copy holds, empty when its donor had written no
// binary log.
func copiedPosition(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, binlogInfo))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return "", nil
	}
	return fields[2], nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
