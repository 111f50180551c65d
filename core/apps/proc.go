package apps

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat reads a process's state and start time, which tells it from a later one with its PID.
func procStat(pid int) (state byte, startTicks uint64, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	fields, ok := statFields(string(data))
	if !ok || len(fields) < 20 {
		return 0, 0, false
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], ticks, true
}

// statFields returns the fields of a /proc/<pid>/stat line after the command name (which may hold
// spaces and parentheses): [0] is the state, [2] the process group, [19] the start time.
func statFields(line string) ([]string, bool) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return nil, false
	}
	f := strings.Fields(line[end+1:])
	return f, len(f) > 0 && f[0] != ""
}

// alive reports whether pid is a live process (not a zombie waiting to be reaped).
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z'
}

func groupMembers(pgid int) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, path := range dirs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f, ok := statFields(string(data))
		if !ok || len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
