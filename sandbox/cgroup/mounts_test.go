package cgroup

import (
	"testing"

	"gotest.tools/v3/assert"
)

// This machine's layout: v1 controllers each in their own hierarchy, the
// memory group nested, and an empty cgroup2 at /sys/fs/cgroup/unified.
const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const hybridCgroup = `9:name=systemd:/
8:pids:/sandboxlab-5623-5455
4:memory:/process_api/ace7
2:cpuacct:/
1:cpu:/
0::/
`

func TestParseMountsHybrid(t *testing.T) {
	m := parseMounts([]byte(hybridMountinfo), []byte(hybridCgroup), 1)
	assert.DeepEqual(t, m, Mounts{
		V1: map[string]string{
			"pids":   "/sys/fs/cgroup/pids/sandboxlab-5623-5455",
			"memory": "/sys/fs/cgroup/memory/process_api/ace7",
			"cpu":    "/sys/fs/cgroup/cpu",
		},
		V2: "/sys/fs/cgroup/unified",
	})
}

func TestParseMountsCoMountedAndPartial(t *testing.T) {
	// cpu and cpuacct share a hierarchy; the memory hierarchy is mounted
	// from a subdirectory (as in a container), so the caller's path is
	// found relative to it; the pids hierarchy shows only a part the
	// caller is not in, so pids is unreachable and left out.
	mi := `1 0 0:1 / /cg/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
2 0 0:2 /ctr /cg/memory rw - cgroup cgroup rw,memory
3 0 0:3 /other /cg/pids rw - cgroup cgroup rw,pids
`
	cg := `5:cpu,cpuacct:/a
4:memory:/ctr/job
3:pids:/elsewhere
`
	m := parseMounts([]byte(mi), []byte(cg), 1)
	assert.DeepEqual(t, m, Mounts{V1: map[string]string{
		"cpu":    "/cg/cpu,cpuacct/a",
		"memory": "/cg/memory/job",
	}})
}

func TestParseMountsV2CallerLeaf(t *testing.T) {
	// Once the caller has moved itself into its leaf (moveSelf), the group
	// runs are made in is still the one above it.
	mi := "7 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	cg := "0::/user.slice/app.scope/sandboxlab-caller-42\n"
	m := parseMounts([]byte(mi), []byte(cg), 42)
	assert.Equal(t, m.V2, "/sys/fs/cgroup/user.slice/app.scope")
	m = parseMounts([]byte(mi), []byte(cg), 43)
	assert.Equal(t, m.V2, "/sys/fs/cgroup/user.slice/app.scope/sandboxlab-caller-42")
}

func TestParseMountsEscapes(t *testing.T) {
	mi := `1 0 0:1 / /mnt/my\040cgroups rw - cgroup2 cgroup2 rw` + "\n"
	m := parseMounts([]byte(mi), []byte("0::/x\n"), 1)
	assert.Equal(t, m.V2, "/mnt/my cgroups/x")
}
