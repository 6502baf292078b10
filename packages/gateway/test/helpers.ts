// Shared by the gateway's end-to-end tests: real upstream servers, configuration files in a temp
// folder, the `toolgate` command spawned as a process, and SDK clients.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ClientCapabilities as ModernCapabilities } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, parseConfig, runCli, type ConfigIssue } from '@toolgate/gateway';
import {
  modernClient as connectModern,
  modernRequest,
  WITH_TASKS,
} from '../../../test-support/modern-request';

export const repoRoot = resolve(__dirname, '../../..');
const requireHere = createRequire(join(__dirname, '..', 'package.json'));
export const tsxLoader = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;
export const cliPath = join(__dirname, '..', 'src', 'cli.ts');
export const fixtureServer = join(__dirname, 'fixtures', 'upstream.mjs');

/** The entry script of an official reference server, run with `node` (never npx at run time). */
export function referenceServer(name: 'everything' | 'filesystem' | 'memory'): string {
  const manifest = requireHere.resolve(`@modelcontextprotocol/server-${name}/package.json`);
  return join(dirname(manifest), 'dist', 'index.js');
}

/** 48 bytes: check-in keys are at least 32 bytes everywhere. */
export const CHECKIN_KEY = 'test-checkin-key-0123456789abcdef-0123456789abcd';

export interface TempDir {
  readonly path: string;
  write(name: string, text: string): string;
  runs(): string[];
  remove(): void;
}

export function tempDir(): TempDir {
  const path = mkdtempSync(join(tmpdir(), 'toolgate-gw-'));
  return {
    path,
    write: (name, text) => {
      const file = join(path, name);
      writeFileSync(file, text);
      return file;
    },
    runs: () => {
      const log = join(path, 'runs.log');
      return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    },
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

export interface GatewayProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout, line by line. */
  readonly stdout: string[];
  /** Its JSON log lines, parsed. */
  logs(): Record<string, unknown>[];
  /** Resolves with the first log line matching. */
  waitForLog(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** SIGTERM, then the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

/** The issues `parseConfig` finds in `text` (read as `file`, with `env`); none when it parses. */
export function configIssues(
  text: string,
  env: Record<string, string> = {},
  file = '/etc/toolgate/toolgate.yaml',
): ConfigIssue[] {
  try {
    parseConfig(text, { file, env });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  return [];
}

/** Runs `toolgate <args>` to completion. */
export function runToolgate(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd = repoRoot,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', tsxLoader, cliPath, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Spawns `toolgate gateway --config FILE --port 0` and resolves once it prints its listening line. */
export function startGateway(
  configFile: string,
  env: Record<string, string> = {},
  extraArgs: readonly string[] = [],
): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    ['--import', tsxLoader, cliPath, 'gateway', '--config', configFile, '--port', '0', ...extraArgs],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stdout: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const watchers = new Set<() => void>();
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  lines(child.stderr!, (line) => {
    stderr.push(line);
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line (a config error, a stack)
    }
    for (const watcher of watchers) watcher();
  });
  return new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rejectStart(new Error(`gateway did not start in time:\n${stderr.join('\n')}`));
    }, 30_000);
    void exited.then((code) => {
      clearTimeout(timer);
      rejectStart(new Error(`gateway exited (${code}) before listening:\n${stderr.join('\n')}`));
    });
    lines(child.stdout!, (line) => {
      stdout.push(line);
      const match = /^toolgate gateway listening on (\S+)$/.exec(line);
      if (match === null || stdout.length !== 1) return;
      clearTimeout(timer);
      resolveStart({
        url: match[1]!,
        child,
        stdout,
        exited,
        logs: () => logs,
        waitForLog: (predicate, timeoutMs = 15_000) =>
          new Promise((found, fail) => {
            const check = () => {
              const hit = logs.find(predicate);
              if (hit === undefined) return false;
              watchers.delete(check);
              clearTimeout(giveUp);
              found(hit);
              return true;
            };
            const giveUp = setTimeout(() => {
              watchers.delete(check);
              fail(new Error(`no such log line; saw:\n${stderr.join('\n')}`));
            }, timeoutMs);
            if (!check()) watchers.add(check);
          }),
        stop: async (signal = 'SIGTERM') => {
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
      });
    });
  });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let index: number;
    while ((index = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
    }
  });
}

/** Someone a test configuration lets in: a bearer token and who it says the caller is. */
export interface TestCaller {
  readonly token: string;
  /** Default `acme`. */
  readonly tenant?: string;
  readonly principal: string;
  readonly roles?: readonly string[];
}

/** The `auth:` block letting each caller in, its token read from `${env:NAME}` by its key. */
export function authYaml(callers: Readonly<Record<string, TestCaller>>): string {
  const tokens = Object.entries(callers).map(([name, caller]) => {
    const roles = caller.roles === undefined ? '' : `, roles: [${caller.roles.join(', ')}]`;
    const identity = `{ tenant: ${caller.tenant ?? 'acme'}, principal: ${caller.principal}${roles} }`;
    return `    - { token: "\${env:${name}}", identity: ${identity} }\n`;
  });
  return `auth:\n  tokens:\n${tokens.join('')}`;
}

/** The environment a gateway reads the callers' tokens from: NAME → token. */
export function tokenEnv<Name extends string>(
  callers: Readonly<Record<Name, TestCaller>>,
): Record<Name, string> {
  return Object.fromEntries(
    Object.entries<TestCaller>(callers).map(([name, caller]) => [name, caller.token]),
  ) as Record<Name, string>;
}

/** The callers the relay and task tests let in; a test picks those its config's tenants hold. */
export const CALLERS = {
  BOT_TOKEN: { token: 'bot-token-0123456789abcdef-0123456789abc', principal: 'support-bot' },
  EVE_TOKEN: { token: 'eve-token-0123456789abcdef-0123456789abc', principal: 'eve' },
  GLOBEX_TOKEN: {
    token: 'globex-token-0123456789abcdef-012345678',
    tenant: 'globex',
    principal: 'support-bot',
  },
  ANA_TOKEN: { token: 'ana-approver-token-0123456789-0123456789', principal: 'ana', roles: ['approver'] },
} as const satisfies Record<string, TestCaller>;

/** The mcp package's task-upstream fixture: a 2026-07-28 upstream answering tools/call with tasks. */
export const taskUpstreamFixture = join(repoRoot, 'packages', 'mcp', 'test', 'fixtures', 'task-upstream.ts');

/** The mcp package's legacy-asking fixture: a 2025-era upstream whose tools ask their client mid-call. */
export const legacyAskingFixture = join(repoRoot, 'packages', 'mcp', 'test', 'fixtures', 'legacy-asking.ts');

/** One stdio upstream under `upstreams:`, run by node (through tsx when `tsx`), logging to `runLog` if given. */
export interface ConfigUpstream {
  readonly name: string;
  readonly script: string;
  readonly tsx?: boolean;
  readonly args?: readonly string[];
  readonly runLog?: string;
}

/**
 * A gateway config letting `callers` in, holding check-ins 200ms under the key in
 * TOOLGATE_CHECKIN_KEY, serving `upstream` (prefixed `<name>_`) to each of `tenants`, allowing what
 * no rule in `rules` (YAML flow maps) decides.
 */
export function relayConfig(
  callers: Readonly<Record<string, TestCaller>>,
  upstream: ConfigUpstream,
  options: { rules?: readonly string[]; tenants?: readonly string[] } = {},
): string {
  const command = [
    'node',
    ...(upstream.tsx === true ? ['--import', JSON.stringify(tsxLoader)] : []),
    JSON.stringify(upstream.script),
    ...(upstream.args ?? []),
  ];
  const env =
    upstream.runLog === undefined ? '' : `    env: { RUN_LOG: ${JSON.stringify(upstream.runLog)} }\n`;
  const rules =
    options.rules === undefined ? '' : `  rules:\n${options.rules.map((rule) => `    - ${rule}\n`).join('')}`;
  const tenants = (options.tenants ?? ['acme']).map(
    (tenant) => `  ${tenant}: { upstreams: [${upstream.name}] }\n`,
  );
  return `${authYaml(callers)}checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms }
upstreams:
  ${upstream.name}:
    command: [${command.join(', ')}]
    prefix: ${upstream.name}_
${env}policy:
${rules}  default: allow
tenants:
${tenants.join('')}`;
}

/** A gateway started from `config(dir)` before the suite's tests and stopped after them. */
export interface SuiteGateway {
  readonly dir: TempDir;
  readonly gateway: GatewayProcess;
}

/**
 * Registers the suite's beforeAll/afterAll: a temp folder, `config(dir)` written to toolgate.yaml, a
 * gateway started with `env` and the check-in key. Read its fields inside tests (they are set then).
 */
export function gatewayPerSuite(
  config: (dir: TempDir) => string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): SuiteGateway {
  let dir: TempDir | undefined;
  let gateway: GatewayProcess | undefined;
  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), {
      ...env,
      TOOLGATE_CHECKIN_KEY: CHECKIN_KEY,
    });
  }, timeoutMs);
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });
  return {
    get dir() {
      if (dir === undefined) throw new Error('the suite has not started its gateway');
      return dir;
    },
    get gateway() {
      if (gateway === undefined) throw new Error('the suite has not started its gateway');
      return gateway;
    },
  };
}

/**
 * An SDK v2 client on 2026-07-28 with a bearer token, answering what it declared: an elicitation
 * asking a color with green, else a name with Ana; sampling with Paris. Not `auto`: it hands back
 * input-required results instead of answering them.
 */
export function modernClient(
  url: string,
  token: string,
  capabilities: ModernCapabilities,
  auto = true,
  clientName = 'relay-test',
) {
  return connectModern(url, token, capabilities, { manual: !auto, name: 'Ana', color: 'green', clientName });
}

import { retryAs } from '../../../test-support/modern-request';
export { protocolError as protocolErrorOf, retryAs } from '../../../test-support/modern-request';

/** A 2026-07-28 client's first call that the upstream answered with a question, as the client got it. */
export interface AskedCall {
  readonly resultType?: string;
  readonly requestState?: string;
  readonly inputRequests?: object;
}

/**
 * `toolgate gateway` in front of one fixture upstream whose tools ask their client mid-call, letting
 * in bot and eve as 2026-07-28 clients that declare form elicitation. Registers the suite's hooks:
 * call it inside a `describe`. `answerAs` retries `tool` answering `name` under `answerKey`.
 */
export function askingUpstreamSuite(options: {
  readonly upstream: string;
  readonly script: string;
  readonly clientName: string;
  readonly answerKey: string;
  /** The configuration's `listen` as a YAML flow map, e.g. `{ maxParkedCalls: 1 }`. */
  readonly listen?: string;
}) {
  const callers = { BOT_TOKEN: CALLERS.BOT_TOKEN, EVE_TOKEN: CALLERS.EVE_TOKEN };
  const tokens = tokenEnv(callers);
  const elicits: ModernCapabilities = { elicitation: { form: {} } };
  const suite = gatewayPerSuite(
    (dir) =>
      relayConfig(callers, {
        name: options.upstream,
        script: options.script,
        tsx: true,
        runLog: `${dir.path}/runs.log`,
      }) + (options.listen === undefined ? '' : `listen: ${options.listen}\n`),
    tokens,
  );
  const client = (token: string, auto = true) =>
    modernClient(suite.gateway.url, token, elicits, auto, options.clientName);
  return {
    suite,
    tokens,
    runs: (): string[] => suite.dir.runs(),
    client,
    /** Calls `tool` as `token` and keeps the input_required answer (the client does not answer it). */
    async ask(token: string, tool: string): Promise<AskedCall> {
      const asking = await client(token, false);
      try {
        return (await asking.callTool(
          { name: tool, arguments: {} },
          { allowInputRequired: true },
        )) as unknown as AskedCall;
      } finally {
        await asking.close();
      }
    },
    answerAs: (token: string, tool: string, name: string, state: string) =>
      retryAs(suite.gateway.url, token, elicits, {
        name: tool,
        inputResponses: { [options.answerKey]: { action: 'accept', content: { name } } },
        requestState: state,
        clientName: options.clientName,
      }),
  };
}

/**
 * `toolgate gateway` in front of one fixture upstream whose tools ask their client, with `rule` (a YAML
 * flow map with `effect: ask`) making them wait for approval first; bot speaks the wire on 2026-07-28,
 * declaring tasks and form elicitation. Registers the suite's hooks: call it inside a `describe`.
 */
export function approvedTaskSuite(options: {
  readonly upstream: string;
  readonly script: string;
  readonly rule: string;
}) {
  const callers = { BOT_TOKEN: CALLERS.BOT_TOKEN };
  const tokens = tokenEnv(callers);
  const capabilities = { ...WITH_TASKS, elicitation: { form: {} } };
  const suite = gatewayPerSuite(
    (dir) =>
      relayConfig(
        callers,
        { name: options.upstream, script: options.script, tsx: true, runLog: `${dir.path}/runs.log` },
        { rules: [options.rule] },
      ),
    tokens,
  );
  const request = (method: string, params: Record<string, unknown>) =>
    modernRequest(suite.gateway.url, tokens.BOT_TOKEN, method, params, capabilities);
  /** Polls tasks/get until the task ends, or shows input_required with requests `asks` accepts. */
  async function until(
    taskId: string,
    asks?: (inputRequests: object) => boolean,
  ): Promise<Record<string, unknown>> {
    for (let i = 0; i < 300; i++) {
      const got = (await request('tasks/get', { taskId })).result;
      if (got === undefined) throw new Error('tasks/get failed');
      const status = got['status'];
      if (status === 'completed' || status === 'failed' || status === 'cancelled') return got;
      if (status === 'input_required' && asks?.(got['inputRequests'] as object) === true) return got;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the task did not get there in time');
  }
  return { suite, request, until };
}

/** Input requests holding `key`: what `until` waits for. */
export const withKey = (key: string) => (inputRequests: object) => Object.hasOwn(inputRequests, key);

/** The fixture `shop` upstream under `upstreams:`, logging each run to `dir`'s runs.log. */
export function shopUpstream(dir: TempDir): string {
  return `  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
`;
}

/** The stable code of a refusal the gateway answered a tool call with. */
export function refusalCode(result: unknown): string | undefined {
  const meta = (result as { _meta?: Record<string, { code?: string }> })._meta;
  return meta?.['io.toolgate/refusal']?.code;
}

/** Polls `probe` until it answers something, failing after `ms` with what it waited for. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 150));
  }
}

/** A request to the gateway at `path` as `token`'s caller: GET, or with a JSON body POST unless `method` says. */
export function callerFetch(
  gatewayUrl: string,
  token: string,
  path: string,
  request: { readonly method?: string; readonly body?: unknown } = {},
): Promise<Response> {
  const { body } = request;
  return fetch(new URL(path, gatewayUrl), {
    method: request.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

export interface ConnectOptions {
  /** Declare form elicitation (the shorthand most tests need). */
  readonly elicitation?: boolean;
  /** Declared as they are, over `elicitation`. */
  readonly capabilities?: ClientCapabilities;
  /** Installs the client's request handlers (roots, sampling …) before it connects. */
  readonly handlers?: (client: Client) => void;
  readonly name?: string;
}

/** An SDK client connected over Streamable HTTP with a bearer token. */
export async function connectClient(
  url: string,
  token: string,
  options: ConnectOptions = {},
): Promise<Client> {
  const client = new Client(
    { name: options.name ?? 'gateway-test', version: '1.0.0' },
    { capabilities: options.capabilities ?? (options.elicitation === true ? { elicitation: {} } : {}) },
  );
  options.handlers?.(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((block) => block.text ?? '').join('\n');
}

/** Runs `toolgate` in-process in `dir` with `env`, collecting what it prints. */
export function cliIn(dir: TempDir, env: Record<string, string>) {
  return async (argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, {
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      env,
      cwd: dir.path,
    });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
}
