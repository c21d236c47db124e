package evidence

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/procfs"
)

func TestStatusFields(t *testing.T) {
	s := Status("Name:\tpython3\nVmPeak:\t 1062620 kB\nVmSize:\t    1000 kB\n" +
		"CapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n")
	assert.Check(t, is.Equal(s.Field("Name"), "python3"))
	assert.Check(t, is.Equal(s.Field("NoNewPrivs"), "1"))
	assert.Check(t, is.Equal(s.Field("VmPeak"), "1062620 kB"))
	assert.Check(t, is.Equal(s.KB("VmPeak"), int64(1062620)))
	assert.Check(t, is.Equal(s.KB("VmSize"), int64(1000)))
	assert.Check(t, is.Equal(s.Hex("CapEff"), uint64(0x1ffffffffff)))
	assert.Check(t, is.Equal(s.Hex("CapBnd"), uint64(0)))

	// Missing fields and garbage read as zero values.
	assert.Check(t, is.Equal(s.Field("CapAmb"), ""))
	assert.Check(t, is.Equal(s.KB("VmRSS"), int64(0)))
	assert.Check(t, is.Equal(s.KB("Name"), int64(0)))
	assert.Check(t, is.Equal(s.Hex("CapAmb"), uint64(0)))
	assert.Check(t, is.Equal(Status(nil).Field("Name"), ""))
}

func TestStatusOfAProcess(t *testing.T) {
	me := os.Getpid()
	assert.Check(t, is.Equal(StatusField(me, "Pid"), strconv.Itoa(me)))
	assert.Check(t, StatusKB(me, "VmPeak") > 0)

	// A process that is gone reads as zero values.
	cmd := exec.Command("/bin/true")
	assert.NilError(t, cmd.Run())
	gone := cmd.Process.Pid
	assert.Check(t, is.Equal(StatusField(gone, "Pid"), ""))
	assert.Check(t, is.Equal(StatusKB(gone, "VmPeak"), int64(0)))
	assert.Check(t, is.Equal(StatusHex(gone, "CapEff"), uint64(0)))
	assert.Check(t, is.Equal(OpenFDs(gone), 0))
}

func TestOpenFDs(t *testing.T) {
	me := os.Getpid()
	before := OpenFDs(me)
	assert.Assert(t, before > 0)
	var files []*os.File
	for range 5 {
		f, err := os.Open("/dev/null")
		assert.NilError(t, err)
		files = append(files, f)
	}
	assert.Check(t, is.Equal(OpenFDs(me), before+5))
	for _, f := range files {
		f.Close()
	}
}

func TestMountinfo(t *testing.T) {
	mounts := ParseMountinfo([]byte("22 1 0:21 / /proc rw - proc proc rw\n" +
		"36 35 0:52 / /tmp rw,relatime shared:1 - tmpfs sandboxlab-attack-1-ab rw,size=1024k\n" +
		"\n"))
	assert.DeepEqual(t, mounts, []Mount{
		{Point: "/proc", Type: "proc", Source: "proc", Dev: "0:21"},
		{Point: "/tmp", Type: "tmpfs", Source: "sandboxlab-attack-1-ab", Dev: "0:52"},
	})
	// A private tmpfs is one the host does not have on that point.
	host := ParseMountinfo([]byte("22 1 0:21 / /proc rw - proc proc rw\n30 1 0:30 / /tmp rw - tmpfs tmpfs rw\n"))
	assert.Check(t, PrivateTmpfs(mounts, host, "/tmp"))
	assert.Check(t, !PrivateTmpfs(host, host, "/tmp"), "the host's own tmpfs is not private")
	assert.Check(t, !PrivateTmpfs(mounts, host, "/proc"), "not a tmpfs")
	m, ok := FindMount(mounts, "tmpfs", "sandboxlab-attack-1-ab")
	assert.Check(t, ok)
	assert.Check(t, is.Equal(m.Point, "/tmp"))
	_, ok = FindMount(mounts, "tmpfs", "other")
	assert.Check(t, !ok)
	_, ok = FindMount(mounts, "proc", "sandboxlab-attack-1-ab")
	assert.Check(t, !ok)
	assert.Check(t, MountedOn(mounts, "/tmp"))
	assert.Check(t, !MountedOn(mounts, "/home"))

	mine, err := Mountinfo(os.Getpid())
	assert.NilError(t, err)
	assert.Check(t, MountedOn(mine, "/"))
}

func TestHoneypotReceivesFromALocalClient(t *testing.T) {
	h, err := StartHoneypot()
	assert.NilError(t, err)
	defer h.Close()
	for _, msg := range []string{"stolen", " twice"} {
		c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(h.Port()))
		assert.NilError(t, err)
		_, err = c.Write([]byte(msg))
		assert.NilError(t, err)
		assert.NilError(t, c.Close())
	}
	conns, received, sample := h.Received()
	assert.Check(t, is.Equal(conns, 2))
	assert.Check(t, is.Equal(received, int64(12)))
	assert.Check(t, is.Len(sample, 12))
	h.Close() // closing again does nothing
	conns2, received2, _ := h.Received()
	assert.Check(t, is.Equal(conns2, conns))
	assert.Check(t, is.Equal(received2, received))

	// Closed means closed: nothing listens on the port any more.
	_, err = net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(h.Port()), time.Second)
	assert.Check(t, err != nil)
}

func TestHoneypotKeepsASample(t *testing.T) {
	h, err := StartHoneypot()
	assert.NilError(t, err)
	c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(h.Port()))
	assert.NilError(t, err)
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	_, err = c.Write(big)
	assert.NilError(t, err)
	assert.NilError(t, c.Close())
	_, received, sample := h.Received()
	assert.Check(t, is.Equal(received, int64(len(big))))
	assert.Check(t, is.Equal(string(sample), string(big[:honeypotSample])))
}

// start starts path with argv (argv[0] included) and kills it at the end
// of the test.
func start(t *testing.T, path string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := &exec.Cmd{Path: path, Args: argv}
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestSamplerSeesATaggedProcess(t *testing.T) {
	tag := procfs.Tag()
	// sleep takes every argument as a duration: the tag goes in argv[0].
	cmd := start(t, "/bin/sleep", tag, "30")
	var mu sync.Mutex
	var seen []int
	s := Sample(tag, 5*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range procs {
			if !slices.Contains(seen, p.PID) {
				seen = append(seen, p.PID)
			}
		}
	})
	time.Sleep(50 * time.Millisecond)
	s.Stop()
	s.Stop() // stopping again does nothing
	assert.DeepEqual(t, seen, []int{cmd.Process.Pid})

	// Once stopped, it samples no more; and a process that is gone is
	// not seen.
	cmd.Process.Kill()
	cmd.Wait()
	var after []procfs.Proc
	s = Sample(tag, 5*time.Millisecond, func(_ time.Time, procs []procfs.Proc) { after = append(after, procs...) })
	time.Sleep(20 * time.Millisecond)
	s.Stop()
	assert.Check(t, is.Len(after, 0))
}

func TestSampleUntilEndsWhenSettled(t *testing.T) {
	tag := procfs.Tag()
	calls := 0
	s := SampleUntil(tag, time.Millisecond, func(time.Time, []procfs.Proc) bool {
		calls++
		return calls == 3
	})
	time.Sleep(50 * time.Millisecond)
	s.Stop()
	assert.Check(t, is.Equal(calls, 3))
}

func TestPeaksOfPrograms(t *testing.T) {
	_, err := os.Stat(Python)
	skip.If(t, err != nil, "no %s", Python)
	tag := procfs.Tag()
	// A tagged process that is not Python (as the sandbox's init is until
	// it execs the program) is no program.
	start(t, "/bin/sleep", tag, "30")

	count := PeakCount(tag, 5*time.Millisecond)
	var pids []int
	for range 2 {
		pids = append(pids, start(t, Python, Python, "-c", "import time; time.sleep(30)", tag).Process.Pid)
	}
	byPID := PeakOf(tag, 5*time.Millisecond, func(pid int) int64 { return int64(pid) })
	time.Sleep(100 * time.Millisecond)

	n, _ := count.Stop()
	assert.Check(t, is.Equal(n, int64(2)))
	v, pid := byPID.Stop()
	assert.Check(t, is.Equal(v, int64(slices.Max(pids))))
	assert.Check(t, is.Equal(pid, slices.Max(pids)))

	var programs []int
	for _, p := range Programs(procfs.WithArg(tag)) {
		programs = append(programs, p.PID)
	}
	slices.Sort(programs)
	slices.Sort(pids)
	assert.DeepEqual(t, programs, pids)

	// A peak never seen is 0.
	v, pid = PeakOf(procfs.Tag(), 5*time.Millisecond, func(int) int64 { return 1 }).Stop()
	assert.Check(t, is.Equal(v, int64(0)))
	assert.Check(t, is.Equal(pid, 0))
}
