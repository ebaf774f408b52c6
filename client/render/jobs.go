package render

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/braidflow/braid/client"
)

// timeLayout is how job start times print.
const timeLayout = "2006-01-02 15:04:05"

// JobList prints jobs as a table: id, name, status, start time, and the
// run time (up to now for a running job) or, for a failed job, its error.
// Times are shown in loc (nil: UTC).
func JobList(w io.Writer, jobs []client.JobSummary, now time.Time, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The OWNER column shows only when a job has one: a job manager
	// without client authentication has no owners.
	owners := false
	for _, j := range jobs {
		owners = owners || j.Owner != ""
	}
	if owners {
		fmt.Fprint(tw, "OWNER\t")
	}
	fmt.Fprintln(tw, "JOB ID\tNAME\tSTATUS\tSTART TIME\tDURATION / ERROR")
	for _, j := range jobs {
		start, last := "-", "-"
		if !j.Start.IsZero() {
			start = j.Start.In(loc).Format(timeLayout)
			end := j.End
			if end.IsZero() {
				end = now
			}
			last = end.Sub(j.Start).Round(time.Millisecond).String()
		}
		if j.Error != "" {
			last = oneLine(j.Error)
		}
		if owners {
			fmt.Fprintf(tw, "%s\t", cmp.Or(j.Owner, "-"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, j.Name, j.Status, start, last)
	}
	if len(jobs) == 0 {
		fmt.Fprintln(tw, "(no jobs)")
	}
	return tw.Flush()
}

// JobDetail prints a job's summary, then each vertex with its subtasks:
// index, task manager id and address, status, rows in and out.
func JobDetail(w io.Writer, d client.JobDetail, now time.Time, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	j := d.Job
	fmt.Fprintf(w, "Job ID:   %s\nName:     %s\nStatus:   %s\n", j.ID, j.Name, j.Status)
	if j.Owner != "" {
		fmt.Fprintf(w, "Owner:    %s\n", j.Owner)
	}
	if !j.Start.IsZero() {
		end := j.End
		if end.IsZero() {
			end = now
		}
		fmt.Fprintf(w, "Started:  %s\nDuration: %s\n", j.Start.In(loc).Format(timeLayout), end.Sub(j.Start).Round(time.Millisecond))
	}
	if j.Error != "" {
		fmt.Fprintf(w, "Error:    %s\n", j.Error)
	}
	if c := d.Checkpoints; c != nil {
		latest := "none yet"
		if c.LatestID > 0 {
			latest = fmt.Sprintf("%d at %s (%s ago)", c.LatestID, c.Latest.In(loc).Format(timeLayout), now.Sub(c.Latest).Round(time.Millisecond))
		}
		fmt.Fprintf(w, "Checkpoints: every %s, latest %s\nAttempt:  %d (%d restarts)\n", c.Interval, latest, c.Attempt, c.Restarts)
	}
	for _, v := range d.Vertices {
		fmt.Fprintf(w, "\nVertex %d: %s (parallelism %d)\n", v.ID, v.Name, v.Parallelism)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  SUBTASK\tTASK MANAGER\tADDRESS\tSTATUS\tROWS IN\tROWS OUT\tTO OTHER TMS")
		for _, s := range v.Subtasks {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%d\t%d\n", s.Index, dash(s.TaskManagerID), dash(s.TaskManagerAddress), dash(s.Status), s.RowsIn, s.RowsOut, s.RemoteRowsOut)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i] + " ..."
		}
	}
	return s
}
