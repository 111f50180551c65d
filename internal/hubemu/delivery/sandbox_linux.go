package delivery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// jobLandlock handles every filesystem right and IPC scope that go-landlock knows (best effort: a
// kernel with an older Landlock enforces the part it has) and no network right: the job's network
// is its own namespace's, with nothing in it but its own loopback.
func jobLandlock() landlock.Config {
	c := landlock.V11.BestEffort()
	c.HandledAccessNet = 0
	return c
}

// sandboxError says why jobs cannot be sandboxed here, or nil.
func sandboxError() error {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		return errNoSandbox
	}
	return nil
}

// The names this program is started under to make a job's sandbox (sandboxInit): the outer
// stage, a plain child of the hub, starts the inner one in the job's namespaces, which executes
// the job. Two stages because the hub is not dumpable (Harden): the /proc files of a child it
// clones into a user namespace belong to root, so the hub could not write the child's uid_map;
// the outer stage, a fresh program, is dumpable and can.
const (
	sandboxArg0      = "robothub-job-sandbox"
	sandboxInnerArg0 = "robothub-job-sandbox-ns"
)

// sandboxSpec is what the sandbox is told, on its fd 3: what the job may see, and the job.
type sandboxSpec struct {
	Read    []string `json:"read"`    // directories the job reads (and runs programs from)
	RunDir  string   `json:"run_dir"` // its HOME and TMPDIR, the one directory it writes
	Root    string   `json:"root"`    // an empty directory for the job's root filesystem
	Devices []string `json:"devices"`
	Argv    []string `json:"argv"`
	Env     []string `json:"env"` // the job's: the stages run with none of it (no LD_PRELOAD of the job's in them)
}

// startSandboxed starts cmd, a job, in a sandbox that keeps it away from this machine's services
// and files (docs/RELIABILITY.md, "Threat model: the local hub and the receiver"):
//
//   - its own network namespace, with nothing but a loopback of its own: the robot daemon, the
//     broker, the hub, anything listening on this machine (loopback included) cannot be reached;
//   - its own mount namespace, whose root is a fresh tmpfs holding the system's directories and
//     its PATH (read), its run directory (read and write) and a few devices: the hub's and the
//     robot daemon's data dirs, their unix sockets (a socket's peer check would see the hub's
//     user, often the daemon's own) and the users' homes do not exist for it;
//   - a Landlock domain over the same paths, and no capabilities.
//
// The namespaces are made by clone(2) (with a user namespace first when the hub is not root,
// whose root is the hub's user, left without capabilities before the job starts); the mounts by
// this program started again (sandboxInit), which then executes the job. When the kernel refuses
// the namespaces, the job does not run, and the error says why.
func startSandboxed(cmd *exec.Cmd, read []string, runDir, rootDir string) error {
	if err := sandboxError(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("making the job's sandbox: finding this program: %w", err)
	}
	spec, _ := json.Marshal(sandboxSpec{Read: read, RunDir: runDir, Root: rootDir, Devices: jobDevices, Argv: cmd.Args, Env: cmd.Environ()})
	specR, specW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer specR.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specW.Close()
		return err
	}
	defer statusR.Close()
	// The job's own command is found by the sandbox, on the job's PATH, in the job's root.
	cmd.Path, cmd.Args, cmd.Err, cmd.Env = self, []string{sandboxArg0}, nil, []string{}
	cmd.ExtraFiles = []*os.File{specR, statusW}
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		specW.Close()
		return fmt.Errorf("making the job's sandbox: %w", err)
	}
	_, werr := specW.Write(spec)
	specW.Close()
	// The status pipe closes when the inner stage executes the job (close-on-exec), with nothing
	// in it; a stage that failed writes why first.
	msg, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	if len(msg) > 0 || werr != nil {
		_ = cmd.Wait()
		if len(msg) == 0 {
			msg = []byte("making the job's sandbox: it was not told what to run: " + werr.Error())
		}
		return errors.New(string(msg))
	}
	return nil
}

func init() {
	if len(os.Args) > 0 {
		switch os.Args[0] {
		case sandboxArg0:
			sandboxOuter()
		case sandboxInnerArg0:
			sandboxInit()
		}
	}
}

// sandboxOuter is this program started as sandboxArg0 by startSandboxed: it starts the inner
// stage in the job's new namespaces, passes the spec on, and ends as the job ends. It never
// returns.
func sandboxOuter() {
	status := os.NewFile(4, "status")
	fail := func(format string, args ...any) {
		fmt.Fprintf(status, format, args...)
		os.Exit(126)
	}
	spec, err := io.ReadAll(io.LimitReader(os.NewFile(3, "spec"), 1<<20))
	if err != nil {
		fail("making the job's sandbox: reading what to run: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		fail("making the job's sandbox: finding this program: %v", err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		fail("making the job's sandbox: %v", err)
	}
	inner := &exec.Cmd{Path: self, Args: []string{sandboxInnerArg0}, Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: []*os.File{specR, status},
		SysProcAttr: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}}
	if uid := os.Geteuid(); uid != 0 {
		// Without privileges, a user namespace of its own makes the others possible: this user is
		// its root, which the inner stage leaves without capabilities before the job starts.
		inner.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		inner.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		inner.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		inner.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := inner.Start(); err != nil {
		fail("the kernel refused the job its own network and mount namespaces (%v): jobs run only where they cannot reach this machine's services", err)
	}
	specR.Close()
	status.Close()
	_, _ = specW.Write(spec)
	specW.Close()
	err = inner.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Ended by a signal: so does this stage, as the hub would have seen the job end.
			signal.Reset(ws.Signal())
			_ = syscall.Kill(os.Getpid(), ws.Signal())
		}
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Exit(126)
	}
	os.Exit(0)
}

// sandboxInit is this program started as sandboxInnerArg0 in the job's new namespaces: it makes
// the job's root, confines itself and executes the job. It never returns.
func sandboxInit() {
	status := os.NewFile(4, "status")
	fail := func(format string, args ...any) {
		fmt.Fprintf(status, "making the job's sandbox: "+format, args...)
		os.Exit(126)
	}
	unix.CloseOnExec(4)
	var spec sandboxSpec
	specFile := os.NewFile(3, "spec")
	if err := json.NewDecoder(io.LimitReader(specFile, 1<<20)).Decode(&spec); err != nil {
		fail("reading what to run: %v", err)
	}
	specFile.Close()
	if len(spec.Argv) == 0 {
		fail("no command to run")
	}
	runtime.LockOSThread() // Landlock and the dropped capabilities are this thread's, which executes the job
	if err := jobRoot(spec); err != nil {
		fail("%v", err)
	}
	if err := loopbackUp(); err != nil {
		fail("the job's loopback: %v", err)
	}
	os.Clearenv()
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			_ = os.Setenv(k, v)
		}
	}
	path, err := exec.LookPath(spec.Argv[0]) // on the job's PATH, in the job's root
	if err != nil {
		fmt.Fprintf(status, "the job's command: %v", err)
		os.Exit(127)
	}
	if err := confine(spec); err != nil {
		fail("%v", err)
	}
	err = syscall.Exec(path, spec.Argv, spec.Env)
	fail("running %s: %v", spec.Argv[0], err)
}

// jobRoot makes the job's root filesystem, a tmpfs at spec.Root holding spec.Read (bound), the
// run directory and the devices, at their own paths, and makes it the root (pivot_root), the
// old one detached: nothing else of this machine's filesystem is there to open or connect to.
func jobRoot(spec sandboxSpec) error {
	root := spec.Root
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the job's mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("the job's root filesystem: %w", err)
	}
	// Parents before children, and nothing under a directory already bound: a directory made
	// under a bound one would be made in this machine's filesystem.
	read := slices.Clone(spec.Read)
	slices.SortFunc(read, func(a, b string) int { return len(a) - len(b) })
	var bound []string
	under := func(p string) bool {
		for _, b := range bound {
			if p == b || strings.HasPrefix(p, b+"/") {
				return true
			}
		}
		return false
	}
	for _, d := range read {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || d == "/" || under(d) {
			continue
		}
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue // a directory this machine has not: nothing to show
		case fi.Mode()&os.ModeSymlink != 0:
			// /bin -> usr/bin on a merged /usr: the same link, which resolves in the job's root.
			target, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(d)), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(root, d)); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		case fi.IsDir():
			if err := bindAt(root, d, true); err != nil {
				return err
			}
			bound = append(bound, d)
		}
	}
	// Read-only is Landlock's (confine): a read-only remount of these binds would have to repeat
	// the locked flags of each mount under them.
	if err := bindAt(root, spec.RunDir, true); err != nil {
		return err
	}
	for _, dev := range spec.Devices {
		if _, err := os.Stat(dev); err != nil {
			continue
		}
		if err := bindAt(root, dev, false); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		_ = os.Symlink(target, filepath.Join(root, "dev", name))
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o1777); err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root to the job's root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching this machine's filesystem from the job: %w", err)
	}
	return os.Chdir(spec.RunDir)
}

// bindAt binds the directory (dir) or file at p onto the same path under root.
func bindAt(root, p string, dir bool) error {
	at := filepath.Join(root, p)
	if dir {
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(at, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := unix.Mount(p, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("showing %s to the job: %w", p, err)
	}
	return nil
}

// loopbackUp brings up the loopback of the job's network namespace (made down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// confine gives the calling thread, which then executes the job, no capabilities (none kept, none
// gained as root by executing: the job of a hub run as root, or the user namespace's root) and a
// Landlock domain where it reads spec.Read, and reads and writes its run directory and devices.
func confine(spec sandboxSpec) error {
	// SECBIT_NOROOT and SECBIT_NO_SETUID_FIXUP, locked, and no raising of ambient capabilities.
	const securebits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, securebits, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECUREBITS): %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	fd, flags, err := jobLandlock().NewRulesetFD(
		landlock.RODirs(spec.Read...).IgnoreIfMissing(),
		landlock.RWDirs(spec.RunDir),
		landlock.RWFiles(spec.Devices...).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("the job's Landlock rules: %w", err)
	}
	if fd < 0 {
		return errNoSandbox
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
