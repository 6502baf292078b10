// `node --expose-gc --import tsx bench/security.ts` (`pnpm bench:security`): the figures behind the
// security bounds, printed, not asserted. 1) A pathological schema pattern, '^(a+)+$', checked by
// validate-args (RE2) against inputs a backtracking engine cannot finish, next to native RegExp on
// short inputs. 2) Format and uniqueItems attacks (#20 items 5-6): "before" is each attack against
// the libraries as they were configured before (ajv's own uniqueItems, @cfworker/json-schema's
// interpreter and url format), run in this process at sizes that still finish; "after" is the same
// attack, at full size, against ajvValidator() and evalFreeValidator(). 3) serveHttp's heap across
// 2,000 initializes on loopback and the idle expiry after. 4) What one client can take of serveHttp
// (#20 items 13, 14): sessions it can hold (with the per-client cap and with it lifted, as before it
// existed), whether stalled bodies lock others out, whether an idle SSE stream keeps its session,
// whether a DNS-rebinding page reaches a tool off loopback. 5) Which encoded forms of a credential
// redaction catches (#20 items 8, 9), and what of items 10, 11, 15 and the key length a caller can
// observe. Parts 4 and 5 are written to run unchanged against an older tree, so their before and
// after come from the same code.

import { request } from 'node:http';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { createDispatcher, defineTool, redact, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator } from '@toolgate/middleware';
import { mcpServe, serveHttp, type ServeHttpOptions } from '@toolgate/mcp';

const PATTERN = '^(a+)+$';

function ms(run: () => unknown): number {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function patterns(): void {
  const validate = ajvValidator().compile({
    type: 'object',
    properties: { s: { type: 'string', pattern: PATTERN } },
  });
  const native = new RegExp(PATTERN, 'u');
  console.log(`pattern ${PATTERN}`);
  for (const n of [20, 22, 24]) {
    const input = `${'a'.repeat(n)}!`;
    console.log(`  native RegExp, ${n + 1} chars: ${ms(() => native.test(input)).toFixed(1)} ms`);
  }
  for (const n of [29, 1 << 20]) {
    const input = `${'a'.repeat(n)}!`;
    validate({ s: input });
    console.log(`  validate-args (RE2), ${n + 1} chars: ${ms(() => validate({ s: input })).toFixed(1)} ms`);
  }
}

// The raw libraries, resolved where middleware resolves them: the "before" configuration.
const fromMiddleware = createRequire(import.meta.resolve('@toolgate/middleware'));
const { Ajv } = fromMiddleware('ajv') as {
  Ajv: new (options: object) => { compile(schema: object): (data: unknown) => boolean };
};
const { Validator } = fromMiddleware('@cfworker/json-schema') as {
  Validator: new (
    schema: object,
    draft: string,
    shortCircuit: boolean,
  ) => { validate(data: unknown): unknown };
};

const URL_SCHEMA = { type: 'object', properties: { link: { type: 'string', format: 'url' } } };
const UNIQUE = { type: 'object', properties: { items: { type: 'array', uniqueItems: true } } };
const objects = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ i })) });
const strings = (n: number) => ({ items: Array.from({ length: n }, (_, i) => `s${i}`) });

function validationAttacks(): void {
  console.log('\nvalidation attacks (#20 items 5-6)');
  console.log(
    '  before: @cfworker/json-schema, format url (its pattern backtracks; the time doubles per character)',
  );
  const cfUrl = new Validator(URL_SCHEMA, '7', false);
  cfUrl.validate({ link: 'http://example.com' });
  for (const n of [19, 21, 23, 25]) {
    const link = `http://${'a'.repeat(n)}-`;
    console.log(`    ${link.length} chars: ${ms(() => cfUrl.validate({ link })).toFixed(1)} ms`);
  }
  console.log("  before: ajv's own uniqueItems on distinct objects (pairwise: quadratic)");
  const rawAjv = new Ajv({ allErrors: true }).compile(UNIQUE);
  for (const n of [2_500, 5_000, 10_000]) {
    const args = objects(n);
    console.log(`    ${n} objects: ${ms(() => rawAjv(args)).toFixed(0)} ms`);
  }
  console.log('  before: @cfworker/json-schema uniqueItems on distinct strings (pairwise: quadratic)');
  const cfUnique = new Validator(UNIQUE, '7', false);
  for (const n of [5_000, 10_000, 15_000]) {
    const args = strings(n);
    console.log(`    ${n} strings: ${ms(() => cfUnique.validate(args)).toFixed(0)} ms`);
  }
  const fourMb = strings(450_000);
  const attacks: ReadonlyArray<readonly [string, JsonSchema, Record<string, unknown>]> = [
    ['format url, 38 chars', URL_SCHEMA, { link: `http://${'a'.repeat(30)}-` }],
    ['format url, 100,000 chars', URL_SCHEMA, { link: `http://${'a'.repeat(100_000)}-` }],
    ['uniqueItems, 20,000 objects (0.23 MB)', UNIQUE, objects(20_000)],
    ['uniqueItems, 50,000 strings', UNIQUE, strings(50_000)],
    [`uniqueItems, 450,000 strings (${(JSON.stringify(fourMb).length / 1e6).toFixed(1)} MB)`, UNIQUE, fourMb],
  ];
  for (const [name, make] of [
    ['ajvValidator()', ajvValidator],
    ['evalFreeValidator()', evalFreeValidator],
  ] as const) {
    console.log(`  after: ${name}`);
    for (const [what, schema, args] of attacks) {
      const validate = make().compile(schema);
      validate(args);
      console.log(`    ${what}: ${ms(() => validate(args)).toFixed(1)} ms`);
    }
  }
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Reply {
  readonly status: number | undefined;
  readonly session: string | undefined;
}

function post(url: URL, body: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, agent: false },
      (res) => {
        res.resume();
        const session = res.headers['mcp-session-id'];
        res.on('end', () =>
          resolve({ status: res.statusCode, session: typeof session === 'string' ? session : undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = (url: URL, headers: Record<string, string> = {}) => post(url, INITIALIZE, headers);

const heapMb = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

function echoTool(onRun: () => void = () => undefined) {
  return defineTool({
    name: 'echo',
    description: 'Echoes.',
    inputSchema: { type: 'object', additionalProperties: true },
    execute: () => {
      onRun();
      return 'ok';
    },
  });
}

async function serving(options: ServeHttpOptions & Record<string, unknown>, onRun?: () => void) {
  const served = mcpServe([echoTool(onRun)], { name: 'bench', version: '1.0.0', chain: canonicalChain() });
  const http = await serveHttp(served, options);
  return {
    http,
    async close() {
      await http.close();
      await served.close();
    },
  };
}

async function sessions(): Promise<void> {
  const idleMs = 3_000;
  const { http, close } = await serving({
    maxSessions: 2_001,
    maxSessionsPerClient: 2_001,
    sessionIdleMs: idleMs,
  });
  await initialize(http.url);
  await until(() => http.sessionCount === 0, idleMs * 3);
  const baseline = heapMb();
  let ok = 0;
  for (let batch = 0; batch < 100; batch++) {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => initialize(http.url)));
    ok += statuses.filter((reply) => reply.status === 200).length;
  }
  const open = http.sessionCount;
  const loaded = heapMb();
  await until(() => http.sessionCount === 0, idleMs * 10);
  const after = heapMb();
  console.log(`sessions: ${ok} initializes answered 200, ${open} open at the peak`);
  console.log(
    `  heap baseline ${baseline.toFixed(1)} MB, with the sessions open ${loaded.toFixed(1)} MB, after idle expiry ${after.toFixed(1)} MB`,
  );
  await close();
}

/** One unauthenticated client sends 1,000 initializes, 50 at a time: how many sessions it gets. */
async function oneClient(options: ServeHttpOptions & Record<string, unknown>): Promise<string> {
  const { http, close } = await serving(options);
  const started = Date.now();
  let ok = 0;
  for (let batch = 0; batch < 20; batch++) {
    const replies = await Promise.all(Array.from({ length: 50 }, () => initialize(http.url)));
    ok += replies.filter((reply) => reply.status === 200).length;
  }
  const held = http.sessionCount;
  await close();
  return `${ok} of 1,000 initializes answered 200, ${held} sessions held, in ${Date.now() - started} ms`;
}

/** A raw connection that sends part of a request and then nothing. */
function stall(url: URL, text: string): { socket: Socket; closed: Promise<number> } {
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined);
  // Read what comes back, so the close is seen.
  socket.resume();
  socket.write(text);
  const started = Date.now();
  return {
    socket,
    closed: new Promise((resolve) => socket.on('close', () => resolve(Date.now() - started))),
  };
}

async function stalledBodies(): Promise<string> {
  const { http, close } = await serving({ maxSessions: 20, bodyTimeoutMs: 1_000 });
  const head =
    `POST ${http.url.pathname} HTTP/1.1\r\nHost: ${http.url.host}\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${INITIALIZE.length}\r\n\r\n`;
  const stalled = Array.from({ length: 20 }, () => stall(http.url, head + INITIALIZE.slice(0, 10)));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const legit = await initialize(http.url);
  const closedAfter = await Promise.race([
    Promise.all(stalled.map((s) => s.closed)).then((times) => `closed after ${Math.max(...times)} ms`),
    new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5,000 ms'), 5_000)),
  ]);
  for (const s of stalled) s.socket.destroy();
  await close();
  return `20 clients stall their bodies (maxSessions 20): a 21st client's initialize answers ${legit.status}; the stalled ones ${closedAfter}`;
}

async function idleStream(): Promise<string> {
  const idleMs = 1_000;
  const { http, close } = await serving({ sessionIdleMs: idleMs });
  const opened = await initialize(http.url);
  const session = opened.session ?? '';
  await post(http.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    'mcp-session-id': session,
  });
  const started = Date.now();
  const ended = new Promise<number>((resolve) => {
    const stream = request(http.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': session },
      agent: false,
    });
    stream.on('response', (res) => {
      res.resume();
      res.on('close', () => resolve(Date.now() - started));
    });
    stream.on('error', () => resolve(Date.now() - started));
    stream.end();
  });
  const verdict = await Promise.race([
    ended.then((after) => `closed after ${after} ms`),
    new Promise<string>((resolve) => setTimeout(() => resolve('still open after 8,000 ms'), 8_000)),
  ]);
  await close();
  return `a session holding an SSE stream and nothing else (sessionIdleMs ${idleMs}): ${verdict}`;
}

async function rebinding(): Promise<string> {
  let runs = 0;
  const lines: string[] = [];
  const { http, close } = await serving(
    { host: '0.0.0.0', onWarning: (w: { message: string }) => lines.push(w.message) },
    () => runs++,
  );
  const url = new URL(`http://127.0.0.1:${http.url.port}${http.url.pathname}`);
  const rebound = `rebound.example:${url.port}`;
  const page = { host: rebound, origin: `http://${rebound}` };
  const opened = await initialize(url, page);
  let call: number | undefined;
  if (opened.session !== undefined) {
    await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
      ...page,
      'mcp-session-id': opened.session,
    });
    const called = await post(
      url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: {} },
      }),
      { ...page, 'mcp-session-id': opened.session },
    );
    call = called.status;
  }
  await close();
  return (
    `bound to 0.0.0.0 without allowedOrigins, a page with Origin = Host: initialize ${opened.status}` +
    `${call === undefined ? '' : `, tools/call ${call}`}, tool ran ${runs} time(s); warnings at start: ${lines.length}`
  );
}

async function serving13and14(): Promise<void> {
  console.log('what one client can take of serveHttp (#20 items 13, 14)');
  console.log(`  sessions one client can hold, default caps: ${await oneClient({})}`);
  console.log(
    `  sessions one client can hold, per-client cap lifted (maxSessionsPerClient 1,000, as before the cap): ${await oneClient({ maxSessionsPerClient: 1_000 })}`,
  );
  console.log(`  ${await stalledBodies()}`);
  console.log(`  ${await idleStream()}`);
  console.log(`  ${await rebinding()}`);
}

const SECRET = 'sk_live/4f9Qz+T7bW2mK8xR';
const utf8 = (text: string) => new TextEncoder().encode(text);
const b64 = (text: string) => btoa(String.fromCharCode(...utf8(text)));
const ENCODINGS: readonly [string, (secret: string) => string][] = [
  ['raw', (s) => s],
  ['JSON-escaped', (s) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/')],
  ['%XX (encodeURIComponent)', encodeURIComponent],
  ['%xx lowercase', (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
  ['form encoding', (s) => new URLSearchParams({ k: s }).toString().slice(2)],
  ['base64', b64],
  ['base64url', (s) => b64(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')],
  ['HTTP Basic user:secret', (s) => `Basic ${b64(`svc-user:${s}`)}`],
  ['hex', (s) => [...utf8(s)].map((b) => b.toString(16).padStart(2, '0')).join('')],
  ['HEX', (s) => [...utf8(s)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join('')],
];

/** A tool that echoes its credential, served over HTTP and called once: the tools/call result as sent. */
async function echoedCredential(value: string, execute: (key: string) => unknown): Promise<unknown> {
  const tool = defineTool({
    name: 'upstream',
    description: 'Echoes its credential.',
    inputSchema: { type: 'object' },
    needs: { kind: 'api_key', service: 'upstream' },
    execute: (_args, ctx) => execute(String(ctx.credential?.reveal())),
  });
  const served = mcpServe([tool], {
    name: 'bench',
    version: '1.0.0',
    chain: canonicalChain({ credentials: { resolve: () => ({ kind: 'api_key', value }) } }),
  });
  const http = await serveHttp(served);
  const opened = await initialize(http.url);
  const headers = { 'mcp-session-id': opened.session ?? '' };
  await post(http.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      http.url,
      { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'upstream', arguments: {} },
      }),
    );
  });
  await http.close();
  await served.close();
  // The answer comes as one SSE event or as plain JSON.
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return (JSON.parse(data === undefined ? text : data.slice(6)) as { result?: unknown }).result;
}

async function redaction(): Promise<void> {
  console.log('redaction of an echoed credential (#20 items 8, 9)');
  const caught = ENCODINGS.filter(
    ([, encode]) => !redact(`x ${encode(SECRET)} y`, [SECRET]).includes(encode(SECRET)),
  );
  console.log(
    `  encoded forms caught in text: ${caught.length} of ${ENCODINGS.length} (${caught.map(([name]) => name).join(', ')})`,
  );
  const missed = ENCODINGS.filter(([name]) => !caught.some(([c]) => c === name)).map(([name]) => name);
  console.log(`  missed: ${missed.length === 0 ? 'none' : missed.join(', ')}`);
  const pan = '4111111111111111';
  const asNumber = await echoedCredential(pan, (key) => ({ pan: Number(key) }));
  console.log(
    `  a numeric secret echoed as a number, MCP structuredContent: ${JSON.stringify((asNumber as { structuredContent?: unknown }).structuredContent)}`,
  );
  // A Node Buffer: its JSON form lists the bytes, as an upstream client library would hand them over.
  const asBytes = await echoedCredential(SECRET, (key) => ({ raw: Buffer.from(key) }));
  const wire = JSON.stringify(asBytes);
  console.log(
    `  a secret in a Buffer: its bytes on the wire: ${wire.includes([...utf8(SECRET)].slice(0, 8).join(',')) ? 'yes' : 'no'}`,
  );
}

async function callerVisible(): Promise<void> {
  console.log('what a caller can observe of #20 items 10, 11, 15 and the key length');
  let ran = 0;
  const dispatcher = createDispatcher({ tools: [echoTool(() => ran++)], chain: canonicalChain() });
  const outcome = await dispatcher.dispatch({ toolName: 'echo', args: '{"__proto__":{"isAdmin":true}}' });
  console.log(`  a '__proto__' key in args: outcome ${outcome.kind}, tool ran ${ran} time(s)`);

  const hung = defineTool({
    name: 'refund',
    description: 'Refunds.',
    inputSchema: { type: 'object' },
    checkIn: () => new Promise<boolean>(() => undefined),
    execute: () => 'refunded',
  });
  const asking = createDispatcher({
    tools: [hung],
    chain: canonicalChain({ checkInKey: 'bench-check-in-key-not-a-secret-0123456789', deadlineMs: 500 }),
  });
  const started = Date.now();
  const verdict = await Promise.race([
    asking
      .dispatch({ toolName: 'refund', args: {} })
      .then((o) => `${o.kind} after ${Date.now() - started} ms`),
    new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 3,000 ms'), 3_000)),
  ]);
  console.log(`  a checkIn predicate that never answers (deadlineMs 500): ${verdict}`);

  const built = (make: () => unknown) => {
    try {
      make();
      return 'accepted';
    } catch {
      return 'refused at build';
    }
  };
  console.log(
    `  a budget of 1e308: ${built(() => canonicalChain({ limits: { failOpen: true, limits: [{ name: 'spend', per: 'tenant', budget: 1e308, windowMs: 60_000, cost: () => 1 }] } }))}`,
  );
  console.log(`  a 1-character checkInKey: ${built(() => canonicalChain({ checkInKey: 'k' }))}`);
}

/** Waits, polling, until `condition` holds or `limitMs` passes. */
async function until(condition: () => boolean, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
}

patterns();
validationAttacks();
await sessions();
await serving13and14();
await redaction();
await callerVisible();
// Whatever an older tree left open (a stream that never idles out), the figures are printed.
process.exit(0);
