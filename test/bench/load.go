package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// maxOtherCores is the most CPU, in cores, that processes outside the benchmark may use on
// average over a sample for the figures that follow to be recorded. Above it they compete for the
// cores with the cluster and the operator, and the figures measure that contention: half a core
// is a quarter of a 2-core machine, well above what an idle desktop or CI runner uses.
const maxOtherCores = 0.5

// loadSampleTime is how long each sample watches the CPU: long enough to average out a busy
// instant, short beside the parts it comes before.
const loadSampleTime = 2 * time.Second

// loadSample is what the machine was doing just before a part of the benchmark.
type loadSample struct {
	// Before names the part that followed.
	Before string `json:"before"`
	// LoadAverage is the 1-minute load average, the benchmark's own processes included.
	LoadAverage float64 `json:"load_average_1m"`
	// OtherCores is the CPU time that every process outside the benchmark's process tree used
	// during the sample, kernel and stolen time included, in cores.
	OtherCores float64 `json:"other_cores"`
	// Error is why the CPU could not be sampled; such a sample counts as busy.
	Error string `json:"error,omitempty"`
}

// sampleLoad samples the machine for loadSampleTime and says so, warning when it is too busy for
// the results to be recorded.
func sampleLoad(before string) loadSample {
	s := loadSample{Before: before, LoadAverage: loadAverage1()}
	other, err := otherCores(loadSampleTime)
	if err != nil {
		s.Error = err.Error()
	}
	s.OtherCores = round2(other)
	progress("before %s: %s", before, s)
	if s.busy() {
		progress("the machine is busy: this section's results will be printed, not written")
	}
	return s
}

func (s loadSample) busy() bool { return s.Error != "" || s.OtherCores > maxOtherCores }

func (s loadSample) String() string {
	if s.Error != "" {
		return fmt.Sprintf("load average %.2f, other processes' CPU unknown (%s)", s.LoadAverage, s.Error)
	}
	return fmt.Sprintf("load average %.2f, other processes %.2f cores", s.LoadAverage, s.OtherCores)
}

// busyReason says why samples forbid recording the results they come before, or is empty.
func busyReason(samples []loadSample) string {
	var reasons []string
	for _, s := range samples {
		if s.busy() {
			reasons = append(reasons, fmt.Sprintf("before %s, %s", s.Before, s))
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	return fmt.Sprintf("processes other than the benchmark used more than %.1f core over %s (%s)",
		maxOtherCores, loadSampleTime, strings.Join(reasons, "; "))
}

// otherCores is the CPU, in cores, that processes outside this process and its descendants used
// over d: the machine's busy time from /proc/stat less the tree's own. Both count in the same
// clock ticks, and the machine's total ticks over d give the number of cores they were spread on.
func otherCores(d time.Duration) (float64, error) {
	busy0, total0, cpus, err := machineTicks()
	if err != nil {
		return 0, err
	}
	tree0 := treeTicks()
	time.Sleep(d)
	busy1, total1, _, err := machineTicks()
	if err != nil {
		return 0, err
	}
	tree1 := treeTicks()
	if total1 <= total0 {
		return 0, fmt.Errorf("/proc/stat counted no time over %s", d)
	}
	// A process of the tree that exits unreaped takes its ticks away with it, which can make the
	// difference slightly negative on an idle machine.
	other := max(float64(busy1-busy0)-float64(tree1-tree0), 0)
	return other / float64(total1-total0) * float64(cpus), nil
}

// machineTicks reads the ticks of all CPUs from /proc/stat: busy (user, nice, system, irq,
// softirq and steal, which another guest of the host took) and total (idle and iowait besides),
// and the number of CPUs. Guest time is already part of user time.
func machineTicks() (busy, total uint64, cpus int, err error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, err
	}
	var all []string
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && fields[0] == "cpu":
			all = fields[1:]
		case len(fields) > 0 && strings.HasPrefix(fields[0], "cpu"):
			cpus++
		}
	}
	if len(all) < 8 || cpus == 0 {
		return 0, 0, 0, fmt.Errorf("/proc/stat has no CPU totals")
	}
	var ticks [8]uint64
	for i := range ticks {
		if ticks[i], err = strconv.ParseUint(all[i], 10, 64); err != nil {
			return 0, 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
	}
	user, nice, system, idle, iowait, irq, softirq, steal := ticks[0], ticks[1], ticks[2], ticks[3], ticks[4], ticks[5], ticks[6], ticks[7]
	busy = user + nice + system + irq + softirq + steal
	return busy, busy + idle + iowait, cpus, nil
}

// treeTicks is the CPU time, in clock ticks, of this process and its descendants, with that of
// the children they have reaped: the cluster's components and the operator are among them.
func treeTicks() uint64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	children := map[int][]int{}
	ticks := map[int]uint64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A process that exits meanwhile is skipped.
		if ppid, t, ok := processTicks(pid); ok {
			children[ppid] = append(children[ppid], pid)
			ticks[pid] = t
		}
	}
	var sum uint64
	for queue := []int{os.Getpid()}; len(queue) > 0; queue = queue[1:] {
		sum += ticks[queue[0]]
		queue = append(queue, children[queue[0]]...)
	}
	return sum
}

// processTicks reads a process's parent and its CPU time with its reaped children's (utime,
// stime, cutime and cstime) from /proc/<pid>/stat, whose command name, in parentheses, may hold
// spaces.
func processTicks(pid int) (ppid int, ticks uint64, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, 0, false
	}
	// Fields from the state on: the parent is the 4th of the line, utime to cstime the 14th to 17th.
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 15 {
		return 0, 0, false
	}
	if ppid, err = strconv.Atoi(fields[1]); err != nil {
		return 0, 0, false
	}
	for _, f := range fields[11:15] {
		t, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += t
	}
	return ppid, ticks, true
}

// loadAverage1 is the 1-minute load average, or 0 when it cannot be read.
func loadAverage1() float64 {
	fields := strings.Fields(loadAverage())
	if len(fields) == 0 {
		return 0
	}
	f, _ := strconv.ParseFloat(fields[0], 64)
	return f
}
