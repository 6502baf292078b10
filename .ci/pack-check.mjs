// Uses the packages as another project would: packs core, middleware, mcp and testing with pnpm,
// installs the tarballs with plain npm in a temp project outside the workspace, runs the README's
// quick start as .mjs (checking what it prints against its `// →` lines), type-checks it as .ts under
// moduleResolution nodenext and bundler, and loads every package through import and require.
// Then the `toolgate` command as someone without a clone gets it: the tarballs `pnpm pack:gateway`
// writes, installed with `npm install -g` into a temp prefix, serving a reference MCP server from the
// npm registry; an MCP SDK client makes governed calls through it, and SIGTERM stops it.
// Needs the build output (packages/*/dist) and the npm registry. Exit status 0 when all of that holds.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['core', 'middleware', 'mcp', 'testing'];
const TYPESCRIPT = 'typescript@~5.9.3';
const NODE_TYPES = '@types/node@^22.19.0';
/** The reference upstream and the client, from the npm registry, as the gateway's tests pin them. */
const MEMORY_SERVER = '@modelcontextprotocol/server-memory@2026.8.31';
const MCP_SDK = '@modelcontextprotocol/sdk@^1.32.2';

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
/** Runs a command, echoing it; returns { status, stdout, stderr }. */
const run = (command, args, cwd) => {
  console.log(`$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: cleanEnv() });
  if (result.status !== 0) console.log(`${result.stdout}${result.stderr}`.trim());
  return result;
};
/** The environment without the npm_* settings a parent pnpm or npm run would pass down. */
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));

/** The first ```ts block under the README heading `## Quick start`. */
function quickStart() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1];
  const block = section === undefined ? null : /^```ts\n([\s\S]*?)^```$/m.exec(section);
  if (block === null) throw new Error("README.md has no ```ts block under '## Quick start'");
  return block[1];
}

const work = mkdtempSync(join(tmpdir(), 'toolgate-pack-'));
try {
  // 1. Pack. pnpm rewrites workspace: ranges to the real versions in each tarball's package.json.
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  const filters = PACKAGES.flatMap((name) => ['--filter', `./packages/${name}`]);
  const packed = run(
    'npx',
    ['-y', 'pnpm@12.4.2', '-r', ...filters, 'pack', '--pack-destination', tarballs],
    root,
  );
  check(packed.status === 0, 'pnpm -r pack of core, middleware, mcp and testing');
  const files = readdirSync(tarballs).filter((file) => file.endsWith('.tgz'));
  check(files.length === PACKAGES.length, `${PACKAGES.length} tarballs (${files.join(', ')})`);
  for (const file of files) {
    const manifest = execFileSync('tar', ['-xzOf', join(tarballs, file), 'package/package.json'], {
      encoding: 'utf8',
    });
    check(!manifest.includes('workspace:'), `${file}: no workspace: ranges left in package.json`);
    const listing = execFileSync('tar', ['-tzf', join(tarballs, file)], { encoding: 'utf8' });
    check(listing.includes('package/dist/index.js'), `${file}: carries the build (dist/index.js)`);
  }

  // 2. A project of its own, outside the workspace, installing the tarballs with plain npm.
  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-toolgate', private: true, type: 'module' }, null, 2),
  );
  const installed = run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...files.map((file) => join(tarballs, file)),
      'typebox@^1.0.0',
      TYPESCRIPT,
      NODE_TYPES,
    ],
    project,
  );
  check(installed.status === 0, 'npm install of the tarballs, typebox, typescript 5.9 and @types/node 22');
  // Every @toolgate package in the tree must be one of ours, never a registry namesake.
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'));
  const ours = Object.entries(lock.packages ?? {}).filter(([path]) => /node_modules\/@toolgate\//.test(path));
  check(
    ours.length === PACKAGES.length && ours.every(([, entry]) => String(entry.resolved).startsWith('file:')),
    `each @toolgate package installed once, from its tarball (${ours.map(([path]) => path).join(', ')})`,
  );

  // 3. The README quick start, as written, run as an ES module.
  const code = quickStart();
  writeFileSync(join(project, 'quickstart.mjs'), code);
  const started = run(process.execPath, ['quickstart.mjs'], project);
  check(
    started.status === 0 && started.stderr === '',
    'the quick start runs as .mjs, exit 0, nothing on stderr',
  );
  const printed = started.stdout.split('\n').map((line) => line.trim());
  let from = 0;
  for (const line of [...code.matchAll(/^\/\/ → (.*)$/gm)].map((match) => match[1].trim())) {
    const at = printed.indexOf(line, from);
    check(at !== -1, `it prints: ${line.length > 90 ? `${line.slice(0, 89)}…` : line}`);
    if (at !== -1) from = at + 1;
  }

  // 4. The same code as TypeScript, under both module resolutions a project is likely to use.
  writeFileSync(join(project, 'quickstart.ts'), code);
  const strict = { strict: true, noEmit: true, target: 'es2022', types: ['node'], skipLibCheck: false };
  const configs = {
    nodenext: { ...strict, module: 'nodenext', moduleResolution: 'nodenext' },
    bundler: { ...strict, module: 'esnext', moduleResolution: 'bundler' },
  };
  for (const [name, compilerOptions] of Object.entries(configs)) {
    const file = `tsconfig.${name}.json`;
    writeFileSync(
      join(project, file),
      JSON.stringify({ compilerOptions, files: ['quickstart.ts'] }, null, 2),
    );
    const typed = run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', file], project);
    check(typed.status === 0, `tsc --noEmit of quickstart.ts with moduleResolution ${name}`);
  }

  // 5. Every package loads through import and through require.
  const names = PACKAGES.map((name) => `@toolgate/${name}`);
  writeFileSync(
    join(project, 'load.mjs'),
    `${names.map((name, i) => `import * as p${i} from '${name}';`).join('\n')}\nconsole.log([${names.map((_, i) => `Object.keys(p${i}).length`).join(', ')}].every((n) => n > 0));\n`,
  );
  const imported = run(process.execPath, ['load.mjs'], project);
  check(imported.status === 0 && imported.stdout.trim() === 'true', 'every package loads with import');
  writeFileSync(
    join(project, 'load.cjs'),
    `console.log([${names.map((name) => `require('${name}')`).join(', ')}].every((p) => Object.keys(p).length > 0));\n`,
  );
  const required = run(process.execPath, ['load.cjs'], project);
  check(required.status === 0 && required.stdout.trim() === 'true', 'every package loads with require');

  await gatewayWithoutClone(work);
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(failures.length === 0 ? 'pack-check: passed' : `pack-check: ${failures.length} check(s) failed`);
process.exit(failures.length === 0 ? 0 : 1);

/** `pnpm pack:gateway`, `npm install -g` of what it wrote, and the installed `toolgate gateway` serving. */
async function gatewayWithoutClone(work) {
  const tarballs = join(work, 'gateway-tarballs');
  const packed = run(process.execPath, [join(root, 'scripts', 'pack-gateway.mjs'), tarballs], root);
  const files = packed.status === 0 ? readdirSync(tarballs).filter((file) => file.endsWith('.tgz')) : [];
  check(
    packed.status === 0 && files.includes('toolgate-gateway-0.1.0.tgz'),
    `pack:gateway wrote ${files.length} tarballs`,
  );
  if (!files.includes('toolgate-gateway-0.1.0.tgz')) return;

  const prefix = join(work, 'global');
  const installed = run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...files.map((f) => join(tarballs, f)),
    ],
    work,
  );
  const toolgate = join(prefix, 'bin', 'toolgate');
  check(
    installed.status === 0 && existsSync(toolgate),
    'npm install -g of the gateway tarballs gives a toolgate command',
  );
  if (!existsSync(toolgate)) return;
  const usage = run(toolgate, ['--help'], work);
  check(`${usage.stdout}${usage.stderr}`.includes('usage: toolgate'), 'toolgate --help prints its usage');

  // The client side: the reference server and the MCP SDK, from the registry, in a folder of their own.
  const client = join(work, 'client');
  mkdirSync(client);
  writeFileSync(
    join(client, 'package.json'),
    JSON.stringify({ name: 'gateway-client', private: true, type: 'module' }),
  );
  const fetched = run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', MEMORY_SERVER, MCP_SDK],
    client,
  );
  check(fetched.status === 0, `npm install of ${MEMORY_SERVER} and ${MCP_SDK}`);
  if (fetched.status !== 0) return;
  const memory = join(client, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

  const site = join(work, 'site');
  mkdirSync(site);
  const token = 'pack-check-token-0123456789abcdef';
  writeFileSync(
    join(site, 'toolgate.yaml'),
    `auth: { tokens: [{ token: ${token}, identity: { tenant: acme, principal: bot } }] }
stores: { state: 'sqlite:./toolgate.db' }
upstreams:
  memory:
    command: [node, ${JSON.stringify(memory)}]
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(site, 'memory.jsonl'))} }
    prefix: mem_
    include: [read_graph, create_entities]
tenants: { acme: { upstreams: [memory] } }
`,
  );
  console.log(`$ ${toolgate} gateway --config toolgate.yaml --port 0`);
  const gateway = spawn(toolgate, ['gateway', '--config', 'toolgate.yaml', '--port', '0'], {
    cwd: site,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  gateway.stdout.on('data', (chunk) => (stdout += chunk));
  gateway.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((done) => gateway.on('exit', (code, signal) => done({ code, signal })));
  try {
    const url = await within(30_000, async () => /listening on (\S+)/.exec(stdout)?.[1]);
    check(url !== undefined, `the installed toolgate gateway listens (${url ?? 'no url'})`);
    if (url === undefined) {
      console.log(stderr.trim());
      return;
    }
    writeFileSync(
      join(client, 'call.mjs'),
      `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const client = new Client({ name: 'pack-check', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), {
  requestInit: { headers: { authorization: 'Bearer ${token}' } },
}));
const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
const created = await client.callTool({ name: 'mem_create_entities', arguments: { entities: [{ name: 'toolgate', entityType: 'project', observations: ['installed without a clone'] }] } });
const graph = await client.callTool({ name: 'mem_read_graph', arguments: {} });
const refused = await client.callTool({ name: 'mem_create_entities', arguments: { entities: 'not a list' } });
console.log(JSON.stringify({ tools, created: !created.isError, graph: JSON.stringify(graph.content), refused }));
await client.close();
`,
    );
    const called = run(process.execPath, ['call.mjs', url], client);
    let answer = {};
    try {
      answer = JSON.parse(called.stdout.trim().split('\n').at(-1) ?? '{}');
    } catch {
      console.log(called.stdout);
    }
    check(
      JSON.stringify(answer.tools) === JSON.stringify(['mem_create_entities', 'mem_read_graph']),
      `the client sees the governed tools only, prefixed (${JSON.stringify(answer.tools)})`,
    );
    check(
      answer.created === true && String(answer.graph).includes('installed without a clone'),
      'a governed call goes through to the upstream and back',
    );
    check(
      answer.refused?.isError === true && JSON.stringify(answer.refused).includes('entities'),
      'a call with bad arguments is refused before the upstream, in words the model can read',
    );
  } finally {
    gateway.kill('SIGTERM');
    const stopped = await Promise.race([exited, sleep(15_000, undefined, { ref: false })]);
    check(stopped?.code === 0, `SIGTERM stops the installed gateway, exit 0 (${JSON.stringify(stopped)})`);
    if (stopped === undefined) gateway.kill('SIGKILL');
  }
}

/** Polls `probe` every 100 ms until it answers something, or `ms` pass (then undefined). */
async function within(ms, probe) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await sleep(100);
  }
}
