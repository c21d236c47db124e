// The official TypeScript MCP client (@modelcontextprotocol/sdk, pinned in
// package.json) driving `sandboxlab mcp` over stdio, run by
// mcpserver's TestTypeScriptClient, or over Streamable HTTP, run by
// TestTypeScriptClientOverHTTP. Over stdio each scenario starts a server
// of its own, as an agent's client would; over HTTP it connects to the
// server of its flags (cfg.http.servers) with a bearer token, makes a
// sandbox and names it in every call. Each scenario prints one line:
// "ok - NAME[: detail]" or "not ok - NAME: why". Every structuredContent is
// checked against its tool's outputSchema, by the SDK's callTool and once
// more here with the SDK's Ajv validator (which must also refuse a broken
// one, or the check proves nothing).
//
// Usage: node client.mjs '{"bin": ..., "level": 6, "root": ..., "allowed": "127.0.0.x:port",
//                         "allowedToken": ..., "unlisted": "127.0.0.y:port", "python": "/usr/bin/python3",
//                         "http": {"token": ..., "servers": {"": URL, "--timeout 60s": URL, ...}}}'
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const cfg = JSON.parse(process.argv[2]);
const ajv = new AjvJsonSchemaValidator();
let failures = 0;
let validated = 0;

function check(cond, why) {
  if (!cond) throw new Error(why);
}

// connect starts a server with extra flags and returns its client, which
// checks every run's structuredContent against the listed schemas. With
// offer, the client asks for that protocol version instead of its latest,
// as a client built on an older SDK does.
async function connect(flags = [], offer = '') {
  let transport;
  if (cfg.http) {
    const url = cfg.http.servers[flags.join(' ')];
    check(url, `no server for the flags ${JSON.stringify(flags)}`);
    transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${cfg.http.token}` } },
    });
  } else {
    transport = new StdioClientTransport({
      command: cfg.bin,
      args: ['mcp', '--level', String(cfg.level), ...flags],
      env: { PATH: '/usr/bin:/bin', TMPDIR: cfg.root },
      stderr: 'ignore',
    });
  }
  if (offer) {
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => {
      if (msg.method === 'initialize') msg = { ...msg, params: { ...msg.params, protocolVersion: offer } };
      return send(msg, opts);
    };
  }
  let negotiated = '';
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };
  const client = new Client({ name: 'ts-test', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const validators = Object.fromEntries(tools.map((t) => [t.name, ajv.getValidator(t.outputSchema)]));
  let sandbox = '';
  if (cfg.http) {
    const made = await client.callTool({ name: 'create_sandbox', arguments: {} });
    check(!made.isError && validators.create_sandbox(made.structuredContent).valid, `create_sandbox: ${JSON.stringify(made)}`);
    sandbox = made.structuredContent.sandbox;
  }
  const call = async (name, args, options) => {
    const res = await client.callTool({ name, arguments: sandbox ? { sandbox, ...args } : args }, undefined, options);
    const v = validators[name](res.structuredContent);
    check(v.valid, `${name}: structuredContent against its outputSchema: ${v.errorMessage}`);
    validated++;
    return { res, text: res.content.map((c) => c.text).join('\n'), st: res.structuredContent };
  };
  const close = async () => {
    if (sandbox) await call('close_sandbox', {});
    await client.close();
  };
  return { client, tools, call, close, negotiated: () => negotiated };
}

// sessionsLeft lists what is left in the sessions' directory.
function sessionsLeft() {
  return fs.readdirSync(cfg.root);
}

// alive counts the processes whose command line carries token.
function alive(token) {
  let n = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let args;
    try {
      args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    } catch {
      continue;
    }
    if (args.some((a) => a === token || a.startsWith('#' + token))) n++;
  }
  return n;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, cond, ms) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const scenarios = {
  async list_tools() {
    const c = await connect();
    try {
      const names = c.tools.map((t) => t.name).sort();
      const want = ['delete_file', 'list_files', 'read_file', 'run_python', 'run_shell', 'write_file'];
      if (cfg.http) want.unshift('close_sandbox', 'create_sandbox');
      check(JSON.stringify(names) === JSON.stringify(want), `tools ${names}`);
      if (cfg.http) {
        for (const t of c.tools.filter((t) => t.name !== 'create_sandbox')) {
          check(t.inputSchema.required?.includes('sandbox'), `${t.name} does not require the sandbox's handle`);
        }
      }
      for (const t of c.tools) {
        check(t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object' && t.annotations, `${t.name} lacks a schema or annotations`);
      }
      const py = c.tools.find((t) => t.name === 'run_python');
      check(py.description.includes('A run is stopped after 1.5 s of wall-clock time'), 'run_python does not state its limits');
      check(c.negotiated() === LATEST_PROTOCOL_VERSION, `negotiated ${c.negotiated()}`);
      return `protocol ${c.negotiated()}, ${names.join(', ')}`;
    } finally {
      await c.close();
    }
  },

  async older_protocol() {
    // 2025-06-18, the version before the latest: the first with
    // structuredContent and output schemas.
    const c = await connect([], '2025-06-18');
    try {
      check(c.negotiated() === '2025-06-18', `negotiated ${c.negotiated()}`);
      const r = await c.call('run_python', { code: 'print(6 * 7)' });
      check(!r.res.isError && r.text.includes('\n| 42\n') && r.st.status === 'ok', r.text);
      return `protocol ${c.negotiated()}: a run and its structuredContent`;
    } finally {
      await c.close();
    }
  },

  async run_code() {
    const c = await connect();
    try {
      const r = await c.call('run_python', { code: 'print(6 * 7)' });
      check(!r.res.isError && r.text.includes('\n| 42\n') && r.st.status === 'ok', r.text);
      const s = await c.call('run_shell', { command: 'echo shell; exit 4' });
      check(s.res.isError && s.text.includes('Error: the program failed with exit status 4'), s.text);
      return r.text.split('\n')[0];
    } finally {
      await c.close();
    }
  },

  async state() {
    const c = await connect();
    try {
      await c.call('run_python', { code: "x = 41 + 1\nopen('x.txt', 'w').write(str(x))" });
      const r = await c.call('run_python', { code: "print(int(open('x.txt').read()) * 2)" });
      check(r.text.includes('| 84\n'), `the file did not persist: ${r.text}`);
      const v = await c.call('run_python', { code: 'print(x)' });
      check(v.res.isError && v.text.includes("NameError: name 'x' is not defined"), `the variable: ${v.text}`);
      return 'a file persists, a variable does not';
    } finally {
      await c.close();
    }
  },

  async files() {
    const c = await connect();
    try {
      const bytes = Buffer.from([...Array(256).keys()]);
      await c.call('write_file', { name: 'in/data.bin', content: bytes.toString('base64'), base64: true });
      await c.call('write_file', { name: 'notes.txt', content: 'héllo\nwörld\n' });
      const b = await c.call('read_file', { name: 'in/data.bin' });
      check(b.st.encoding === 'base64' && Buffer.from(b.st.content, 'base64').equals(bytes), 'the bytes did not come back');
      const t = await c.call('read_file', { name: 'notes.txt' });
      check(t.st.content === 'héllo\nwörld\n' && t.st.eof, `text: ${JSON.stringify(t.st)}`);
      const bad = await c.call('read_file', { name: '../../etc/passwd' });
      check(bad.res.isError && bad.text.includes("file API's name guard"), bad.text);
      return `${t.st.size} bytes of text and 256 of binary back`;
    } finally {
      await c.close();
    }
  },

  async timeout() {
    const c = await connect();
    try {
      const r = await c.call('run_python', { code: 'import time\ntime.sleep(30)' });
      check(r.res.isError && r.st.reason === 'timeout' && r.st.timed_out, JSON.stringify(r.st));
      check(r.text.startsWith('Error: stopped at the time limit: the run took longer than 1.5 s (wall clock) and was killed'), r.text);
      return r.text.split('. ')[0];
    } finally {
      await c.close();
    }
  },

  async cancel() {
    const c = await connect(['--timeout', '60s']);
    try {
      const token = 'ts' + randomBytes(8).toString('hex');
      const code = `#${token}\nimport subprocess, time\nsubprocess.Popen([${JSON.stringify(cfg.python)}, '-c', 'import time; time.sleep(300)', '${token}'])\ntime.sleep(300)`;
      const ac = new AbortController();
      const pending = c.call('run_python', { code }, { signal: ac.signal, timeout: 120000 });
      pending.catch(() => {});
      await waitFor('the program and its child', () => alive(token) >= 2, 30000);
      ac.abort('the test cancels');
      let rejected = false;
      try {
        await pending;
      } catch {
        rejected = true;
      }
      check(rejected, 'the cancelled call did not reject');
      await waitFor('no process of the cancelled run', () => alive(token) === 0, 10000);
      const r = await c.call('run_python', { code: "print('after')" });
      check(r.text.includes('| after\n'), `the session did not go on: ${r.text}`);
      return 'no process left; the session goes on';
    } finally {
      await c.close();
    }
  },

  async network() {
    const c = await connect(['--timeout', '20s', '--allow', cfg.allowed]);
    try {
      const code = `import urllib.request\nfor url in ("http://${cfg.allowed}/", "http://${cfg.unlisted}/"):\n    try:\n        print(url, urllib.request.urlopen(url, timeout=10).read().decode())\n    except Exception as e:\n        print(url, "failed:", e)\n`;
      const r = await c.call('run_python', { code });
      check(r.text.includes(`| http://${cfg.allowed}/ ${cfg.allowedToken}`), `allowed: ${r.text}`);
      check(r.text.includes(`| http://${cfg.unlisted}/ failed: HTTP Error 403`), `unlisted: ${r.text}`);
      check(r.st.network.length === 2 && r.st.network[0].allowed && !r.st.network[1].allowed, JSON.stringify(r.st.network));
      return 'allowed reached, unlisted refused (403)';
    } finally {
      await c.close();
    }
  },

  async progress() {
    const c = await connect(['--timeout', '10s']);
    try {
      const seen = [];
      const r = await c.call('run_python', { code: 'import time; time.sleep(1.3)' }, { onprogress: (p) => seen.push(p) });
      check(!r.res.isError, r.text);
      check(seen.length >= 1 && seen.every((p, i) => p.total === 10 && (i === 0 || p.progress > seen[i - 1].progress)), JSON.stringify(seen));
      return `${seen.length} notifications, "${seen[0].message}"`;
    } finally {
      await c.close();
    }
  },
};

if (cfg.http) {
  // Without the token, or with another, the server answers 401 and says
  // how to authenticate; the client does not connect.
  scenarios.unauthorized = async () => {
    const url = cfg.http.servers[''];
    const bare = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    check(bare.status === 401 && bare.headers.get('www-authenticate')?.startsWith('Bearer realm="sandboxlab"'), `no token: ${bare.status} ${bare.headers.get('www-authenticate')}`);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${'0'.repeat(64)}` } },
    });
    const client = new Client({ name: 'ts-test', version: '1' });
    let refused = false;
    try {
      await client.connect(transport);
    } catch {
      refused = true;
    }
    check(refused, 'a client with a wrong token connected');
    return '401 with a Bearer challenge';
  };
}

for (const [name, run] of Object.entries(scenarios)) {
  try {
    const detail = await run();
    const left = sessionsLeft();
    check(left.length === 0, `left behind: ${left}`);
    console.log(`ok - ${name}${detail ? ': ' + detail : ''}`);
  } catch (e) {
    failures++;
    console.log(`not ok - ${name}: ${e?.message ?? e}`);
  }
}

// The schema check must be able to fail: a status without its status.
const run = await connect();
const broken = { reason: 'exited', exit_code: 0 };
const refused = !ajv.getValidator(run.tools.find((t) => t.name === 'run_python').outputSchema)(broken).valid;
await run.close();
console.log(`${refused ? 'ok' : 'not ok'} - schema_check: ${validated} structuredContent validated; a broken one ${refused ? 'refused' : 'accepted'}`);
process.exit(failures > 0 || !refused ? 1 : 0);
