package mcpserver

// The egress proxy: its policies (Network.Allow) are served only by a
// binary that links it, and the sandbox's CLI does not (see package
// egress, Linked).
import _ "sandboxlab/sandbox/egress/proxy"
