package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/pk-tools/pk/pkg/jsonl"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
)

// parseSumLine reads one line of a SUMS file: "DIGEST  NAME" (or "DIGEST
// *NAME"), as pk hash writes it, or the --tag form "FORM (NAME) = HEX";
// either with sha256sum's leading backslash for escaped names (not with
// -z, whose names are never escaped).
func parseSumLine(line string, zero bool) (digest, name string, ok bool) {
	esc := !zero && strings.HasPrefix(line, "\\")
	if esc {
		line = line[1:]
	}
	first, _, _ := strings.Cut(line, " ")
	if strings.Contains(first, ":") {
		i := len(first)
		if i == 0 || i+2 > len(line) || (line[i+1] != ' ' && line[i+1] != '*') {
			return "", "", false
		}
		digest, name = line[:i], line[i+2:]
	} else {
		i := strings.Index(line, " (")
		j := strings.LastIndex(line, ") = ")
		if i <= 0 || j < i+2 || strings.ContainsAny(line[:i], " :") || j+4 >= len(line) {
			return "", "", false
		}
		digest, name = line[:i]+":"+line[j+4:], line[i+2:j]
	}
	if name == "" {
		return "", "", false
	}
	if esc {
		r := strings.NewReplacer("\\\\", "\\", "\\n", "\n", "\\r", "\r")
		name = r.Replace(name)
	}
	return digest, name, true
}

// runCheck verifies the SUMS files in turn, as sha256sum -c does; the exit
// code is the worst of theirs (2 over 1 over 0).
func runCheck(w io.Writer, f hashFlags, sums []string) error {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	code := ExitOK
	stdinUsed := false
	for _, s := range sums {
		c := checkSums(bw, f, s, &stdinUsed)
		if c == ExitTrouble || (c == ExitDiffers && code == ExitOK) {
			code = c
		}
	}
	if code != ExitOK {
		return Exit(code)
	}
	return nil
}

// splitLines splits at '\n', or at NUL with -z.
func splitLines(zero bool) bufio.SplitFunc {
	sep := byte('\n')
	if zero {
		sep = 0
	}
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, sep); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}

func checkSums(bw *bufio.Writer, f hashFlags, sums string, stdinUsed *bool) int {
	quiet := f.status
	complain := func(format string, a ...any) {
		if !quiet {
			bw.Flush()
			fmt.Fprintf(os.Stderr, "pk: "+format+"\n", a...)
		}
	}
	var in io.Reader
	if sums == "-" {
		in = os.Stdin
		*stdinUsed = true
	} else {
		fh, err := os.Open(sums)
		if err != nil {
			bw.Flush()
			fmt.Fprintf(os.Stderr, "pk: %v\n", err)
			return ExitTrouble
		}
		defer fh.Close()
		if fi, err := fh.Stat(); err == nil && fi.IsDir() {
			bw.Flush()
			fmt.Fprintf(os.Stderr, "pk: %v\n", input.DirError(sums))
			return ExitTrouble
		}
		in = fh
	}
	type entry struct {
		want string
		vErr error
		job  *hashJob
	}
	var entries []*entry
	var jobs []*hashJob
	bad, missing := 0, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(splitLines(f.zero))
	ln := 0
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d, name, ok := parseSumLine(line, f.zero)
		if !ok {
			bad++
			if f.warn {
				complain("%s: %d: improperly formatted pk hash line", sums, ln)
			}
			continue
		}
		if f.ignoreMissing && name != "-" {
			if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
				missing++
				continue
			}
		}
		o, hexd, err := canon.ParseDigest(d)
		e := &entry{want: hexd, job: &hashJob{name: name, opt: o, done: make(chan struct{})}}
		switch {
		case err != nil:
			var ve *canon.VersionError
			if !errors.As(err, &ve) {
				bad++
				if f.warn {
					complain("%s: %d: %v", sums, ln, err)
				}
				continue
			}
			e.vErr = err
			close(e.job.done)
		case name == "-" && *stdinUsed:
			e.job.err = fmt.Errorf("-: %w", input.ErrStdinTwice)
			close(e.job.done)
		default:
			if name == "-" {
				*stdinUsed = true
			}
			jobs = append(jobs, e.job)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		complain("%s: %v", sums, err)
		return ExitTrouble
	}
	hashAll(jobs, f.jobs)
	enc := jsonl.NewEncoder(bw)
	failed, unread, version := 0, 0, 0
	say := func(name, status string) {
		if f.status {
			return
		}
		if f.json {
			enc.Encode(jsonHash{File: name, Status: status})
			return
		}
		if status == "OK" && f.quiet {
			return
		}
		n, esc := escapeName(name, f.zero)
		if esc {
			bw.WriteString("\\")
		}
		if status == "OK" {
			fmt.Fprintf(bw, "%s: %s", n, color.GreenString("OK"))
		} else {
			fmt.Fprintf(bw, "%s: %s", n, color.RedString("%s", status))
		}
		bw.Write(lineEnd(f.zero))
	}
	for _, e := range entries {
		<-e.job.done
		switch {
		case e.vErr != nil:
			version++
			say(e.job.name, "FAILED wrong form version")
			complain("%s: %v", e.job.name, e.vErr)
		case e.job.err != nil:
			unread++
			say(e.job.name, "FAILED open or read")
			complain("%v", e.job.err)
		case fmt.Sprintf("%x", e.job.res.Sum) == e.want:
			say(e.job.name, "OK")
		default:
			failed++
			say(e.job.name, "FAILED")
		}
	}
	bw.Flush()
	warn := func(n int, one, many string) {
		if n == 1 {
			complain("WARNING: 1 %s", one)
		} else if n > 1 {
			complain("WARNING: %d %s", n, many)
		}
	}
	warn(bad, "line is improperly formatted", "lines are improperly formatted")
	warn(unread, "listed file could not be read", "listed files could not be read")
	warn(failed, "computed digest did NOT match", "computed digests did NOT match")
	warn(version, "digest is of another form version", "digests are of another form version")
	switch {
	case len(entries) == 0 && missing == 0:
		complain("%s: no properly formatted pk hash lines found", sums)
		return ExitDiffers
	case len(entries) == 0:
		complain("%s: no file was verified", sums)
		return ExitDiffers
	case unread > 0:
		return ExitTrouble
	case failed > 0 || version > 0 || (f.strict && bad > 0):
		return ExitDiffers
	}
	return ExitOK
}
