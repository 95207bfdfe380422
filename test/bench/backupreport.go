package main

import (
	"fmt"
	"strings"
)

// backupResult is the backup section of a run: the data path against its floors, and the
// operator's cost per backup.
type backupResult struct {
	Data     *backupData     `json:"data,omitempty"`
	Operator *backupOverhead `json:"operator,omitempty"`
	// loads are the samples taken before the data path and before the operator's part.
	loads []loadSample
}

const backupDataHeader = "| operation | floor | floor s | appkeeper s | ratio | dataset MB/s (floor / appkeeper) | artifact MB/s (floor / appkeeper) | artifact MB (floor / appkeeper) | client CPU s (floor / appkeeper) | server CPU s (floor / appkeeper) | appkeeper's time |\n" +
	"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"

func (op backupOp) row() string {
	return fmt.Sprintf("| %s | `%s` | %.1f | %.1f | %.2f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %s |",
		op.Operation, cell(op.Floor), op.FloorS, op.S, op.Ratio, op.FloorDatasetMBps, op.DatasetMBps,
		op.FloorArtifactMBps, op.ArtifactMBps, op.FloorArtifactMB, op.ArtifactMB,
		op.FloorClientCPUS, op.ClientCPUS, op.FloorServerCPUS, op.ServerCPUS, cell(op.Detail))
}

// cell escapes the pipes of a shell pipeline, which would end a table cell, even in code.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

const backupOverheadHeader = "| backups | operator's requests per backup (its client) | writes per backup (API server) | reconciles per backup | operator CPU ms per backup | created → Running p50/p99 ms | Job's pod done → Succeeded p50/p99 ms |\n" +
	"| ---: | --- | --- | --- | ---: | ---: | ---: |\n"

func (o backupOverhead) row() string {
	return fmt.Sprintf("| %d | %s | %s | %s | %.1f | %.0f / %.0f | %.0f / %.0f |", o.Backups,
		perCR(o.RequestsPerBackup), perCR(o.WritesPerBackup), perCR(o.ReconcilesPerBackup), o.CPUMSPerBackup,
		o.StartP50MS, o.StartP99MS, o.RecordP50MS, o.RecordP99MS)
}

// table is the section as Markdown.
func (r *backupResult) table() string {
	var b strings.Builder
	if d := r.Data; d != nil {
		fmt.Fprintf(&b, "Dataset: %.0f MB (InnoDB data and indexes) in %d tables of 2 databases, %d rows; "+
			"mysqldump writes %.0f MB of SQL. Each figure is the fastest of %d runs, the floor's and appkeeper's in turn. "+
			"appkeeper's restore passed verify (every table's rows and checksum against the manifest) in %.1f s.\n\n",
			d.Dataset.MB, d.Dataset.Tables, d.Dataset.Rows, d.SQLMB, d.Runs, d.VerifyS)
		b.WriteString(backupDataHeader)
		for _, op := range d.Ops {
			b.WriteString(op.row() + "\n")
		}
	}
	if o := r.Operator; o != nil {
		b.WriteString("\nThe operator's cost per on-demand backup (S3 storage), one backup at a time:\n\n" + backupOverheadHeader)
		b.WriteString(o.row() + "\n")
	}
	return b.String()
}

// writeBackupResults prints the section when show is set and writes it to
// <dir>/<date>-backup.md, and the figures to <dir>/latest-backup.json: a run of the backup
// section alone leaves the other rows' files as they are.
func (b *bench) writeBackupResults(r *backupResult, show bool) error {
	return b.writeReport(report{suffix: "-backup", title: "Backup benchmark", preamble: " Every figure of a row comes from the same run as its floor.",
		table: r.table(), key: "backup", figures: r, loads: r.loads}, show)
}
