// A short session of the official TypeScript client with `sandboxlab mcp`,
// printed as a transcript for docs/agents.md: what an agent sends and what
// the server answers (the text the model reads; structuredContent
// abridged to its status and reason).
//
// Usage: node transcript.mjs /path/to/sandboxlab [server flags...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, ...flags] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ['mcp', ...flags], stderr: 'ignore' });
const client = new Client({ name: 'transcript', version: '1' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(`> tools/list\n< ${tools.map((t) => t.name).join(', ')}`);

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  const st = res.structuredContent ?? {};
  console.log(`\n> tools/call ${name} ${JSON.stringify(args)}`);
  console.log(`< isError: ${res.isError ?? false}` + (st.status ? `, structuredContent: {status: ${st.status}, reason: ${st.reason}, ...}` : ''));
  for (const c of res.content) console.log(c.text.replace(/^/gm, '  '));
}

await call('run_python', { code: 'total = sum(range(10))\nprint(totl)' });
await call('run_python', { code: "total = sum(range(10))\nopen('total.txt', 'w').write(str(total))\nprint(total)" });
await call('run_shell', { command: 'cat total.txt; echo; ls -l' });
await call('run_python', { code: 'while True: pass' });
await call('write_file', { name: 'data/input.csv', content: 'a,b\n1,2\n' });
await call('run_python', { code: "import csv\nprint(list(csv.DictReader(open('data/input.csv'))))" });
await call('read_file', { name: '../../etc/shadow' });
await client.close();
