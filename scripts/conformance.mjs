#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in the root
// package.json) with each requirement set against:
//   direct          the reference upstream (test-support/conformance/reference-upstream.ts) over HTTP
//   gateway-stdio   `toolgate gateway` with the reference upstream as its stdio upstream
//   gateway-http    `toolgate gateway` with the reference upstream as its Streamable HTTP upstream
//   library         the library's mcpServe over mcpClient (test-support/conformance/library-proxy.ts)
//   gateway-client  the suite's client scenarios against the gateway's upstream side (the gateway as
//                   client; auth/* scenarios do not apply: the gateway sends configured headers)
// prints a table of scenarios passed per target and requirement set, and every scenario that fails
// through toolgate with its first failing check. The suite validates every message on the wire
// against the spec's JSON schema (its `wire-schema-valid` check), so that check is counted too.
//
//   node scripts/conformance.mjs [--report-only] [--write-docs] [--keep] [--targets a,b] [--requirements r1,r2]
//
// --keep leaves the suite's output (checks.json per scenario; for client scenarios also the
// gateway's log lines in stderr.txt) in the temp folder it prints.
//
// Exit status: 1 when a scenario that passes directly fails through toolgate (not with
// --report-only, which prints the same), or when a direct run itself fails a required scenario (the
// fixture or the driver is broken: with --report-only too); 2 for a usage error or a reference
// upstream that did not start; 0 otherwise.
// The suite needs Node 22 or later: on an older node it runs under `npx -y node@24`.
import { spawn } from 'node:child_process';
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { request as httpRequest, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL, fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const suitePackage = join(root, 'node_modules/@modelcontextprotocol/conformance');
const suiteBin = join(suitePackage, 'dist/index.js');
const fixture = join(root, 'test-support/conformance/reference-upstream.ts');
const libraryProxy = join(root, 'test-support/conformance/library-proxy.ts');
const gatewayClient = join(root, 'test-support/conformance/gateway-client.ts');
const gatewayCli = join(root, 'packages/gateway/src/cli.ts');
const docsFile = join(root, 'docs/mcp.md');
const TOKEN = 'conformance-suite-token-0123456789abcdef';
// Absolute, so a process started in another folder (the suite runs its client in its output folder)
// still finds tsx, and tsx still finds the repository's tsconfig (its @toolgate/* paths).
const tsxImport = import.meta.resolve('tsx');
const tsxEnv = { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json') };
const ALL_TARGETS = ['direct', 'gateway-stdio', 'gateway-http', 'library', 'client-direct', 'gateway-client'];
const ALL_REQUIREMENTS = ['2026-07-28', '2025-11-25'];
const LABELS = {
  direct: 'reference upstream, direct',
  'gateway-stdio': '`toolgate gateway`, stdio upstream',
  'gateway-http': '`toolgate gateway`, HTTP upstream',
  library: 'library `mcpServe` (over `mcpClient`)',
  'client-direct': 'SDK v2 client, direct (client scenarios)',
  'gateway-client': 'gateway as client (client scenarios)',
};
const START_TIMEOUT_MS = 60_000;
const RUN_TIMEOUT_MS = 10 * 60_000;

function usage(message) {
  process.stderr.write(
    `conformance: ${message}\nusage: node scripts/conformance.mjs [--report-only] [--write-docs] [--keep] [--targets ${ALL_TARGETS.join(',')}] [--requirements ${ALL_REQUIREMENTS.join(',')}]\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const options = {
    reportOnly: false,
    writeDocs: false,
    targets: ALL_TARGETS,
    requirements: ALL_REQUIREMENTS,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--report-only') options.reportOnly = true;
    else if (arg === '--write-docs') options.writeDocs = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--targets' || arg === '--requirements') {
      const list = (argv[++i] ?? '').split(',').filter(Boolean);
      const known = arg === '--targets' ? ALL_TARGETS : ALL_REQUIREMENTS;
      const unknown = list.filter((item) => !known.includes(item));
      if (list.length === 0 || unknown.length > 0)
        usage(`${arg} takes a comma-separated list of ${known.join(', ')}; got '${argv[i] ?? ''}'`);
      options[arg === '--targets' ? 'targets' : 'requirements'] = list;
    } else usage(`unknown argument '${arg}'`);
  }
  // Every toolgate target is compared with its direct run.
  if (!options.targets.includes('direct')) options.targets = ['direct', ...options.targets];
  if (options.targets.includes('gateway-client') && !options.targets.includes('client-direct')) {
    options.targets.splice(options.targets.indexOf('gateway-client'), 0, 'client-direct');
  }
  return options;
}

/** The scenario names a requirement set scores, per leg (`server`, `client`), from its YAML file. */
function requirementSet(revision) {
  const text = readFileSync(join(suitePackage, 'requirements', `${revision}.yaml`), 'utf8');
  const legs = { server: [], client: [] };
  let leg;
  for (const line of text.split('\n')) {
    const key = /^([a-z_]+):\s*$/.exec(line);
    if (key) leg = key[1];
    const item = /^ {2}- ([\w/.-]+)\s*$/.exec(line);
    if (item && (leg === 'server' || leg === 'client')) legs[leg].push(item[1]);
  }
  if (legs.server.length === 0)
    throw new Error(`conformance: no server scenarios read from ${revision}.yaml`);
  return legs;
}

const children = new Set();
function stopChildren() {
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  children.clear();
}
process.on('exit', stopChildren);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** Starts a long-running process in its own group; resolves with the URL it prints as `… <url>`. */
function startServing(name, command, args, pattern) {
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.add(child);
  let seen = '';
  let errors = '';
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`${name} printed no URL within ${START_TIMEOUT_MS / 1000}s: ${errors.slice(-2000)}`),
        ),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolveUrl({ url: match[1], child });
      }
    });
    child.stderr.on('data', (chunk) => {
      errors = (errors + chunk.toString()).slice(-20_000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it listened: ${errors.slice(-2000)}`));
    });
  });
}

/**
 * The suite sends no credentials; the gateway requires a bearer token. This loopback forwarder adds
 * one and passes everything else through unchanged (Host and Origin included, so the suite's
 * DNS-rebinding checks still reach the gateway).
 */
function bearerForwarder(target) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${TOKEN}` };
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  return new Promise((resolveUrl) =>
    server.listen(0, '127.0.0.1', () =>
      resolveUrl({ url: `http://127.0.0.1:${server.address().port}/mcp`, server }),
    ),
  );
}

function gatewayConfig(dir, upstream) {
  const file = join(dir, 'toolgate.yaml');
  writeFileSync(
    file,
    [
      'listen: { host: 127.0.0.1, port: 0 }',
      `auth: { tokens: [{ token: ${JSON.stringify(TOKEN)}, identity: { tenant: conformance, principal: suite } }] }`,
      `upstreams: { reference: ${upstream} }`,
      'tenants: { conformance: { upstreams: [reference] } }',
      '',
    ].join('\n'),
  );
  return file;
}

/** The command that runs the suite: this node when it is 22 or later, else a real Node 24 from npm. */
function suiteCommand() {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 22 ? [process.execPath, suiteBin] : ['npx', '-y', 'node@24', suiteBin];
}

function runSuite(args, outDir) {
  const [command, ...prefix] = suiteCommand();
  mkdirSync(outDir, { recursive: true });
  return new Promise((done) => {
    const child = spawn(command, [...prefix, ...args, '-o', outDir], {
      cwd: outDir,
      env: tsxEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output = (output + chunk.toString()).slice(-200_000)));
    child.stderr.on('data', (chunk) => (output = (output + chunk.toString()).slice(-200_000)));
    const timer = setTimeout(() => {
      output += `\nconformance: the suite ran over ${RUN_TIMEOUT_MS / 60_000} minutes and was stopped\n`;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, RUN_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      done({ code, output });
    });
  });
}

/** Per scenario: passed (no FAILURE check), and the first failing check as one line. */
function readResults(outDir) {
  const results = new Map();
  if (!existsSync(outDir)) return results;
  for (const entry of readdirSync(outDir, { recursive: true })) {
    const path = String(entry);
    if (!path.endsWith('checks.json')) continue;
    const folder = dirname(path);
    const scenario = folder.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    let checks;
    try {
      checks = JSON.parse(readFileSync(join(outDir, path), 'utf8'));
    } catch {
      results.set(scenario, { passed: false, why: 'checks.json unreadable' });
      continue;
    }
    const failures = checks.filter((check) => check.status === 'FAILURE');
    const first = failures[0];
    const why = first
      ? `${first.id}: ${(first.errorMessage ?? first.description ?? '').replace(/\s+/g, ' ').slice(0, 220)}`
      : undefined;
    const wireInvalid = failures.some((check) => check.id === 'wire-schema-valid');
    const previous = results.get(scenario);
    // A scenario run twice (retries) counts as passed only if every run passed.
    results.set(scenario, {
      passed: failures.length === 0 && (previous?.passed ?? true),
      why: why ?? previous?.why,
      checks: (previous?.checks ?? 0) + checks.length,
      wireInvalid: wireInvalid || (previous?.wireInvalid ?? false),
    });
  }
  return results;
}

function tally(results, scored) {
  const passed = scored.filter((name) => results.get(name)?.passed === true);
  return { passed: passed.length, total: scored.length };
}

async function startTarget(target, work, direct) {
  const tsx = ['--import', tsxImport];
  if (target === 'direct') {
    return startServing(
      'reference upstream',
      process.execPath,
      [...tsx, fixture, '--http', '--port', '0'],
      /listening (\S+)/,
    );
  }
  if (target === 'library') {
    return startServing(
      'library proxy',
      process.execPath,
      [...tsx, libraryProxy, direct.url],
      /listening (\S+)/,
    );
  }
  const upstream =
    target === 'gateway-stdio'
      ? `{ command: ${JSON.stringify([process.execPath, ...tsx, fixture, '--stdio'])}, cwd: ${JSON.stringify(root)}, roots: relay }`
      : `{ url: ${JSON.stringify(direct.url)}, roots: relay }`;
  const dir = join(work, target);
  mkdirSync(dir, { recursive: true });
  const config = gatewayConfig(dir, upstream);
  const gateway = await startServing(
    `gateway (${target})`,
    process.execPath,
    [...tsx, gatewayCli, 'gateway', '--config', config, '--port', '0'],
    /listening on (\S+)/,
  );
  const forwarder = await bearerForwarder(gateway.url);
  return { url: forwarder.url, child: gateway.child, forwarder: forwarder.server };
}

/** The client scenarios, through the gateway or (`direct`) with the same downstream client alone. */
async function runClientScenarios(revision, scenarios, work, direct) {
  const results = new Map();
  for (const scenario of scenarios) {
    const outDir = join(
      work,
      direct ? 'client-direct' : 'gateway-client',
      revision,
      scenario.replace(/\//g, '_'),
    );
    const command = `${process.execPath} --import ${tsxImport} ${gatewayClient}${direct ? ' --direct' : ''}`;
    await runSuite(
      ['client', '--command', command, '--scenario', scenario, '--spec-version', revision],
      outDir,
    );
    const found = [...readResults(outDir).values()][0];
    results.set(
      scenario,
      found ?? { passed: false, why: 'the suite wrote no checks (the client did not run)' },
    );
  }
  return results;
}

function markdownTable(rows, requirements, sets) {
  const header = `| target | ${requirements.map((r) => `${r} (${sets[r].server.length} server / ${sets[r].client.filter((s) => !s.startsWith('auth/')).length} client scenarios)`).join(' | ')} |`;
  const rule = `| --- | ${requirements.map(() => '---').join(' | ')} |`;
  const lines = rows.map(
    ({ target, cells }) =>
      `| ${LABELS[target]} | ${requirements.map((r) => cells[r] ?? 'not run').join(' | ')} |`,
  );
  return [header, rule, ...lines].join('\n');
}

function writeDocs(table, failures, stamp) {
  const begin = '<!-- conformance:begin (written by scripts/conformance.mjs --write-docs) -->';
  const end = '<!-- conformance:end -->';
  const failureLines =
    failures.length === 0
      ? ['Every scenario that passes directly passes through toolgate.']
      : [
          'What fails through toolgate and passes directly (first failing check):',
          '',
          ...failures.map((line) => `- ${line}`),
        ];
  const block = [begin, '', `Last run: ${stamp}.`, '', table, '', ...failureLines, '', end].join('\n');
  let text = readFileSync(docsFile, 'utf8');
  if (text.includes(begin) && text.includes(end)) {
    text = text.slice(0, text.indexOf(begin)) + block + text.slice(text.indexOf(end) + end.length);
  } else {
    throw new Error(`conformance: ${docsFile} has no conformance markers; add the Conformance section first`);
  }
  writeFileSync(docsFile, text);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!existsSync(suiteBin)) usage(`the suite is not installed at ${suiteBin}; run pnpm install`);
  const sets = Object.fromEntries(options.requirements.map((r) => [r, requirementSet(r)]));
  const work = mkdtempSync(join(tmpdir(), 'toolgate-conformance-'));
  const started = Date.now();
  const results = {}; // target -> revision -> Map(scenario -> result)
  let direct;
  try {
    for (const target of options.targets) {
      results[target] = {};
      if (target === 'gateway-client' || target === 'client-direct') {
        for (const revision of options.requirements) {
          const scenarios = sets[revision].client.filter((name) => !name.startsWith('auth/'));
          process.stderr.write(`conformance: ${target} ${revision} (${scenarios.length} scenarios)\n`);
          results[target][revision] = await runClientScenarios(
            revision,
            scenarios,
            work,
            target === 'client-direct',
          );
        }
        continue;
      }
      let serving;
      try {
        serving = await startTarget(target, work, direct);
      } catch (error) {
        process.stderr.write(`conformance: ${error.message}\n`);
        if (target === 'direct') process.exit(2);
        for (const revision of options.requirements) results[target][revision] = new Map();
        continue;
      }
      if (target === 'direct') direct = serving;
      for (const revision of options.requirements) {
        process.stderr.write(`conformance: ${target} ${revision}\n`);
        const outDir = join(work, target, revision);
        await runSuite(['server', '--url', serving.url, '--requirements', revision], outDir);
        results[target][revision] = readResults(outDir);
      }
      if (target !== 'direct') {
        serving.forwarder?.close();
        try {
          process.kill(-serving.child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        children.delete(serving.child);
      }
    }
  } finally {
    stopChildren();
  }

  const rows = [];
  // One line per scenario and revision: the targets it fails through, and the first one's reason.
  const failing = new Map();
  let regressions = 0;
  let directShort = 0;
  for (const target of options.targets) {
    const cells = {};
    for (const revision of options.requirements) {
      const got = results[target][revision];
      const clientLeg = target === 'gateway-client' || target === 'client-direct';
      const scored = clientLeg
        ? sets[revision].client.filter((s) => !s.startsWith('auth/'))
        : sets[revision].server;
      const { passed, total } = tally(got, scored);
      const wire = scored.filter((name) => got.get(name)?.wireInvalid).length;
      cells[revision] = `${passed}/${total}${wire > 0 ? ` (${wire} with wire-schema violations)` : ''}`;
      // A direct run that fails says the fixture or the driver is wrong; that fails the run too.
      if (target === 'direct' || target === 'client-direct') {
        directShort += total - passed;
        continue;
      }
      const baselineTarget = target === 'gateway-client' ? 'client-direct' : 'direct';
      for (const name of scored) {
        const result = got.get(name);
        const baseline = results[baselineTarget][revision].get(name)?.passed === true;
        if (baseline && result?.passed !== true) {
          regressions++;
          const key = `${revision} \`${name}\``;
          const entry = failing.get(key) ?? { targets: [], why: result?.why ?? 'did not run' };
          entry.targets.push(target);
          failing.set(key, entry);
        }
      }
    }
    rows.push({ target, cells });
  }
  const failures = [...failing].map(([key, { targets, why }]) => `${key} (${targets.join(', ')}): ${why}`);
  const table = markdownTable(rows, options.requirements, sets);
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`\n${table}\n\n`);
  for (const line of failures) process.stdout.write(`- ${line}\n`);
  process.stdout.write(
    `\nconformance: ${seconds}s; ${failures.length} scenario(s) fail through toolgate that pass directly\n`,
  );
  if (options.writeDocs)
    writeDocs(table, failures, `${new Date().toISOString().slice(0, 10)}, ${seconds}s on this machine`);
  if (options.keep) process.stdout.write(`conformance: the suite's checks and logs are in ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
  if (directShort > 0) {
    process.stdout.write(
      `conformance: ${directShort} required scenario(s) fail directly: the fixture or the driver is broken\n`,
    );
    process.exit(1);
  }
  if (regressions > 0 && !options.reportOnly) process.exit(1);
}

main().catch((error) => {
  process.stderr.write(`conformance: ${error.stack ?? error}\n`);
  stopChildren();
  process.exit(2);
});
