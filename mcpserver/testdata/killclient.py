"""An MCP client to be killed: it starts the server given on its command
line, calls run_python with the code in $KILLCLIENT_CODE asking for
progress, and once the first progress notification says the run is going,
prints "RUNNING <server pid>" and waits to be killed."""
import json
import os
import subprocess
import sys
import time

server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()


def receive():
    line = server.stdout.readline()
    if not line:
        sys.exit("the server ended")
    return json.loads(line)


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "killclient", "version": "1"}}})
receive()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "run_python", "arguments": {"code": os.environ["KILLCLIENT_CODE"]}, "_meta": {"progressToken": "k"}}})
while receive().get("method") != "notifications/progress":
    pass
print("RUNNING", server.pid, flush=True)
time.sleep(3600)
