// `node --expose-gc --import tsx bench/security.ts` (after `pnpm build`): the figures behind the
// security bounds, printed, not asserted. 1) A pathological schema pattern, '^(a+)+$', checked by
// validate-args (RE2) against inputs a backtracking engine cannot finish, next to native RegExp on
// short inputs. 2) Format and uniqueItems attacks (#20 items 5-6): "before" is each attack against
// the libraries as they were configured before (ajv's own uniqueItems, @cfworker/json-schema's
// interpreter and url format), run in this process at sizes that still finish; "after" is the same
// attack, at full size, against ajvValidator() and evalFreeValidator(). 3) serveHttp's heap across
// 2,000 initializes on loopback and the idle expiry after. `pnpm bench:security` runs it.

import { request } from 'node:http';
import { createRequire } from 'node:module';
import { defineTool, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator } from '@toolgate/middleware';
import { mcpServe, serveHttp } from '@toolgate/mcp';

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

function initialize(url: URL): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE);
  });
}

const heapMb = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

async function sessions(): Promise<void> {
  const tool = defineTool({
    name: 'echo',
    description: 'Echoes.',
    inputSchema: { type: 'object' },
    execute: () => 'ok',
  });
  const served = mcpServe([tool], { name: 'bench', version: '1.0.0', chain: canonicalChain() });
  const idleMs = 3_000;
  const http = await serveHttp(served, { maxSessions: 2_001, sessionIdleMs: idleMs });
  await initialize(http.url);
  await until(() => http.sessionCount === 0, idleMs * 3);
  const baseline = heapMb();
  let ok = 0;
  for (let batch = 0; batch < 100; batch++) {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => initialize(http.url)));
    ok += statuses.filter((status) => status === 200).length;
  }
  const open = http.sessionCount;
  const loaded = heapMb();
  await until(() => http.sessionCount === 0, idleMs * 10);
  const after = heapMb();
  console.log(`sessions: ${ok} initializes answered 200, ${open} open at the peak`);
  console.log(
    `  heap baseline ${baseline.toFixed(1)} MB, with the sessions open ${loaded.toFixed(1)} MB, after idle expiry ${after.toFixed(1)} MB`,
  );
  await http.close();
  await served.close();
}

/** Waits, polling, until `condition` holds or `limitMs` passes. */
async function until(condition: () => boolean, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
}

patterns();
validationAttacks();
await sessions();
