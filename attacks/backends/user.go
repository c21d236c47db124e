package backends

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox/procfs"
)

// RootlessUserEnv names an existing user for a profile with user:
// throwaway to run as, instead of one the harness makes and removes.
const RootlessUserEnv = "SANDBOXLAB_ROOTLESS_USER"

// throwawayPrefix begins the name of every user the harness makes.
const throwawayPrefix = "sbxlab-"

// userTries bounds the attempts at useradd and userdel, which fail while
// another process holds /etc/passwd's lock.
const userTries = 20

// openThrowaway gives the column the user it starts as: when the harness
// is not root, its own; otherwise the user RootlessUserEnv names, or a
// fresh one made with useradd (with subordinate ids, as useradd gives
// every ordinary user) and removed with userdel when the column closes,
// once nothing of it runs. The program runs as that user too, unless the
// driver knows better.
func (c *Column) openThrowaway(o ColumnOptions) (string, error) {
	self := Identity{UID: os.Geteuid(), GID: os.Getegid()}
	defer func() { c.Program = c.Starter }() // unless the driver maps it (podman's --user)
	if !o.Root {
		c.Starter, c.Cred = self, nil
		return "", nil
	}
	name := os.Getenv(RootlessUserEnv)
	made := name == ""
	if made {
		sweepUsers()
		var b [3]byte
		rand.Read(b[:])
		name = throwawayPrefix + hex.EncodeToString(b[:])
		if err := retryUserCmd("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--comment", throwawayComment+procfs.Owner(), name); err != nil {
			return "", err
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		if made {
			retryUserCmd("userdel", name)
		}
		return "", fmt.Errorf("the rootless user %s: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c.Starter = Identity{UID: uid, GID: gid}
	c.Cred = c.Starter.credential()
	if made {
		c.undo.AddErr(func() error {
			// Nothing of the user may run when it goes.
			procfs.KillPIDs(func() []int { return processesOf(uid) }, teardownLimit)
			return retryUserCmd("userdel", name)
		})
		c.Notes = append(c.Notes, fmt.Sprintf("runs as the throw-away user %s (uid %d), made for the column and removed after it", name, uid))
	} else {
		c.Notes = append(c.Notes, fmt.Sprintf("runs as the user %s (uid %d), from %s", name, uid, RootlessUserEnv))
	}
	return "", nil
}

// throwawayComment begins the comment (GECOS) of a throw-away user; its
// maker's procfs.Owner follows, so that a later harness can tell the
// user of one killed before it could remove it.
const throwawayComment = "sandboxlab throw-away user of "

// sweepUsers removes the throw-away users whose maker has ended without
// removing them (killed mid-column), and whatever of theirs still runs.
func sweepUsers() {
	b, _ := os.ReadFile("/etc/passwd")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 5 || !strings.HasPrefix(f[0], throwawayPrefix) {
			continue
		}
		owner, ok := strings.CutPrefix(f[4], throwawayComment)
		uid, err := strconv.Atoi(f[2])
		if ok && err == nil && procfs.OwnerGone(owner) {
			procfs.KillPIDs(func() []int { return processesOf(uid) }, teardownLimit)
			retryUserCmd("userdel", f[0])
		}
	}
}

// retryUserCmd runs useradd or userdel, again while the user database is
// locked by someone else.
func retryUserCmd(args ...string) error {
	var out []byte
	var err error
	for i := 0; i < userTries; i++ {
		if out, err = exec.Command(args[0], args[1:]...).CombinedOutput(); err == nil {
			return nil
		}
		if !strings.Contains(string(out), "lock") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
}

// processesOf lists the processes whose real user is uid.
func processesOf(uid int) []int {
	procs, _ := procfs.Scan()
	var out []int
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/status")
		if err != nil {
			continue
		}
		if f := strings.Fields(procfs.StatusField(b, "Uid")); len(f) > 0 && f[0] == strconv.Itoa(uid) {
			out = append(out, p.PID)
		}
	}
	return out
}

// mapped is the host identity of the identity inside a rootless user
// namespace of starter's: inside root is starter itself, and n ≥ 1 the
// (n-1)th of its subordinate ids (/etc/subuid, /etc/subgid).
func mapped(starter Identity, inside Identity) (Identity, error) {
	if inside.UID == 0 && inside.GID == 0 {
		return starter, nil
	}
	name := strconv.Itoa(starter.UID)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	uid, err := subordinate("/etc/subuid", name, starter.UID, inside.UID)
	if err != nil {
		return Identity{}, err
	}
	gid, err := subordinate("/etc/subgid", name, starter.UID, inside.GID)
	if err != nil {
		return Identity{}, err
	}
	return Identity{UID: uid, GID: gid}, nil
}

// subordinate maps id (≥ 1) through the first range of file that belongs
// to the user (by name or uid); id 0 is the user itself.
func subordinate(file, name string, uid, id int) (int, error) {
	if id == 0 {
		return uid, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("reading subordinate ids: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ":")
		if len(parts) != 3 || (parts[0] != name && parts[0] != strconv.Itoa(uid)) {
			continue
		}
		start, err1 := strconv.Atoi(parts[1])
		count, err2 := strconv.Atoi(parts[2])
		if err1 == nil && err2 == nil && id-1 < count {
			return start + id - 1, nil
		}
	}
	return 0, fmt.Errorf("%s: no range of %s's holds id %d (rootless containers need one: install uidmap, and useradd adds it)", file, name, id)
}
