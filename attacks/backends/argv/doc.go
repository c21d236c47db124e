// Package argv reads a sandbox's command line as its tool does: it
// splits a profile's command prefix into flag groups (an option and the
// arguments it takes, or --opt=value), from arity tables of bubblewrap,
// firejail, gVisor's runsc, util-linux's unshare and podman, or from the
// groups a profile spells itself in YAML. A word it cannot group (an
// option the table does not know, whose arguments it cannot tell from
// the options after it) is reported with the reason, never guessed: it
// and what follows it stay as they are and are not mutated.
//
// It then plants the defects 'sandboxlab mutate --sandbox' runs: each
// group removed; a read-only bind made writable; one namespace dropped
// from a group that makes several (bubblewrap's --unshare-all becomes
// --unshare-all --share-net, or the other --unshare-* flags; a cluster
// of unshare's short options loses one letter; podman's and runsc's
// namespace modes become host); --die-with-parent or --new-session
// removed (the removal of a lifetime group). Each mutant is a command
// and a stable id: the profile, the group's index and words, the
// operator.
//
// It finds where each word of a profile is written (its line and column
// in the profiles file, or in a custom prefix given on the command line),
// so that reports can point at the flag. It imports only the standard
// library and the YAML decoder.
package argv
