import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CANONICAL_ORDER } from '@toolgate/core';
import { parseDemoArgs } from './cli';
import { runDemo, UNANSWERED, type DemoOptions } from './demo';

type Event = { type: string } & Record<string, unknown>;

const root = join(__dirname, '..', '..');
const tsx = createRequire(join(root, 'package.json')).resolve('tsx');

/** The demo as a user runs it, without a terminal (stdin and stdout are pipes). */
function runCli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', tsx, 'examples/support-desk/main.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
}

async function demoTrace(overrides: Partial<DemoOptions> = {}) {
  const lines: string[] = [];
  const result = await runDemo({
    decide: 'approve',
    json: false,
    color: false,
    store: 'memory',
    write: (line) => lines.push(line),
    ...overrides,
  });
  return { lines, result };
}

async function demoEvents(
  overrides: Partial<DemoOptions> = {},
): Promise<{ events: Event[]; lines: string[]; refunds: number }> {
  const lines: string[] = [];
  const result = await runDemo({
    decide: 'approve',
    json: true,
    color: false,
    store: 'memory',
    write: (line) => lines.push(line),
    ...overrides,
  });
  return { events: lines.map((line) => JSON.parse(line) as Event), lines, refunds: result.refundsIssued };
}

const decidedGates = (events: Event[]) =>
  new Set(events.filter((e) => e.type === 'gate.decision').map((e) => String(e['gate'])));
const runsOf = (events: Event[], tool: string) =>
  events.filter((e) => e.type === 'tool.start' && e['toolName'] === tool).length;

describe('the support-desk demo', () => {
  it('lets every canonical gate and the policy decide at least once', async () => {
    const { events } = await demoEvents();
    const gates = decidedGates(events);
    for (const gate of [...CANONICAL_ORDER, 'policy']) expect(gates).toContain(gate);
  });

  it('refuses the same refunds whether the cap is one CEL rule or a TypeScript middleware', async () => {
    const cel = await demoTrace();
    const ts = await demoTrace({ refundCap: 'typescript' });
    const capped = (outcomes: typeof cel.result.outcomes, gate: string) =>
      outcomes.filter((o) => o.kind === 'refused' && o.gate === gate).map((o) => [o.tenant, o.toolName]);
    expect(capped(cel.result.outcomes, 'policy')).toEqual([
      ['acme', 'issue_refund'],
      ['globex', 'issue_refund'],
    ]);
    expect(capped(ts.result.outcomes, 'refund-cap')).toEqual(capped(cel.result.outcomes, 'policy'));
    const celRefusal = cel.result.outcomes.find((o) => o.kind === 'refused' && o.gate === 'policy');
    expect(celRefusal).toMatchObject({ code: 'POLICY_DENIED', ran: false });
    expect(celRefusal?.content).toContain('Refunds above 1,000 EUR cannot be issued by an agent');
    expect(celRefusal?.ledger.find((r) => r.gate === 'policy')?.why).toContain("rule 'refund-cap'");
    expect(cel.result.refundsIssued).toBe(ts.result.refundsIssued);
  });

  it('denies at least once at every gate the script aims at', async () => {
    const { events } = await demoEvents();
    const denied = new Set(
      events.filter((e) => e.type === 'gate.decision' && e['outcome'] === 'deny').map((e) => e['gate']),
    );
    expect([...denied].sort()).toEqual([
      'capabilities',
      'limits',
      'permission',
      'policy',
      'result-ceiling',
      'validate-args',
      'wants',
    ]);
    expect(events.some((e) => e.type === 'checkin.requested')).toBe(true);
  });

  it('runs the approved refund exactly once, with the credential resolved after consent', async () => {
    const { events, refunds } = await demoEvents();
    expect(refunds).toBe(1);
    expect(runsOf(events, 'issue_refund')).toBe(1);
    const requested = events.findIndex((e) => e.type === 'checkin.requested');
    const resolved = events.findIndex((e) => e.type === 'credential.resolved');
    expect(requested).toBeGreaterThan(-1);
    expect(resolved).toBeGreaterThan(requested);
  });

  it('runs no refund when the person declines', async () => {
    const { events, refunds } = await demoEvents({ decide: 'decline' });
    expect(refunds).toBe(0);
    expect(runsOf(events, 'issue_refund')).toBe(0);
    expect(events.some((e) => e.type === 'credential.resolved')).toBe(false);
  });

  it('marks the MCP tool with its source and keeps the billing key out of every event', async () => {
    const { events, lines } = await demoEvents();
    expect(events.some((e) => e.type === 'dispatch.start' && e['toolSource'] === 'kb-server')).toBe(true);
    expect(lines.join('\n')).not.toContain('sk_demo_');
  });

  it('runs the same conversation on the SQLite stores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-demo-'));
    try {
      const { events, refunds } = await demoEvents({ store: 'sqlite', dbPath: join(dir, 'demo.db') });
      expect(refunds).toBe(1);
      for (const gate of CANONICAL_ORDER) expect(decidedGates(events)).toContain(gate);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const postgresUrl = process.env['TOOLGATE_POSTGRES_URL'];
  (postgresUrl === undefined ? it.skip : it)(
    'runs the same conversation on the PostgreSQL stores',
    async () => {
      const { events, refunds } = await demoEvents({ store: 'postgres' });
      expect(refunds).toBe(1);
      for (const gate of CANONICAL_ORDER) expect(decidedGates(events)).toContain(gate);
    },
  );

  it('--store postgres without a server says how to start one, and exits 2', () => {
    const run = runCli(['--store', 'postgres'], { TOOLGATE_POSTGRES_URL: '' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('TOOLGATE_POSTGRES_URL');
    expect(run.stderr).toContain('.ci/services/postgres.sh');
  });

  it('runs from the command line without a terminal and prints events as JSON lines', () => {
    const run = runCli(['--json', '--yes']);
    expect(run.status).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Event);
    expect(runsOf(events, 'issue_refund')).toBe(1);
  });

  it('declines the refund when nobody answered: no terminal and no --yes/--no, and says so', () => {
    const run = runCli([]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('no terminal and no --yes/--no, so the refund is declined');
    expect(run.stdout).toContain(`declined by ${UNANSWERED.by}`);
    expect(run.stdout).toMatch(/model says: I did not refund Ada Park: /);
    expect(run.stdout).not.toContain('Refunded 250 EUR');
    expect(run.stdout).toContain('refunds issued: 0');
  });

  it('reads no terminal and no flag as unanswered, a terminal as ask, and the flags as themselves', () => {
    const decideFor = (argv: string[], interactive: boolean) => {
      const parsed = parseDemoArgs(argv, { interactive, color: false });
      return parsed.ok ? parsed.options.decide : parsed.error;
    };
    expect(decideFor([], false)).toBe('unanswered');
    expect(decideFor([], true)).toBe('ask');
    expect(decideFor(['--yes'], false)).toBe('approve');
    expect(decideFor(['--no'], true)).toBe('decline');
    expect(decideFor(['--yes', '--no'], false)).toMatch(/contradict/);
    expect(decideFor(['--store', 'mongo'], false)).toMatch(/--store must be one of memory, sqlite, postgres/);
    expect(decideFor(['--store'], false)).toMatch(/--store must be one of/);
    expect(decideFor(['--approve'], false)).toMatch(/unknown argument '--approve'/);
  });

  it('runs no refund when nobody answers, and the ledger names the unattended run', async () => {
    const { result } = await demoTrace({ decide: 'unanswered' });
    expect(result.refundsIssued).toBe(0);
    expect(result.decisions).toEqual([expect.objectContaining({ approved: false, by: UNANSWERED.by })]);
  });

  it('has the model say what the refund outcome it read says, approved or declined', async () => {
    const approved = await demoTrace({ decide: 'approve' });
    expect(approved.result.finalWords['acme']).toBe(
      'Refunded 250 EUR to Ada Park. I summarised the last 10 tickets.',
    );
    const declined = await demoTrace({ decide: 'decline' });
    expect(declined.result.finalWords['acme']).toMatch(
      /^I did not refund Ada Park: .*refunds are on hold this week\. No money was sent\./,
    );
    expect(declined.lines.join('\n')).not.toContain('Refunded 250');
  });

  it('runs each tenant under its own chain, and each outcome carries its tenant’s chain id', async () => {
    const { result, lines } = await demoTrace();
    const { acme, globex } = result.chainIds;
    expect(acme).toMatch(/^chain_/);
    expect(globex).toMatch(/^chain_/);
    expect(acme).not.toBe(globex);
    for (const outcome of result.outcomes) expect(outcome.chainId).toBe(result.chainIds[outcome.tenant]);
    expect(lines.some((line) => line.startsWith(`── tenant globex, chain ${globex} ───`))).toBe(true);
    expect(lines.some((line) => line.startsWith(`acme's chain ${acme}: permission → `))).toBe(true);
    // The same 250 EUR refund pauses under acme's chain and is refused by globex's stricter cap.
    const refunds = result.outcomes.filter((o) => o.toolName === 'issue_refund' && o.kind !== 'refused');
    expect(refunds.map((o) => o.tenant)).toEqual(['acme']);
    const globexRefund = result.outcomes.find((o) => o.tenant === 'globex' && o.toolName === 'issue_refund');
    expect(globexRefund).toMatchObject({
      kind: 'refused',
      gate: 'policy',
      code: 'POLICY_DENIED',
      ran: false,
    });
  });

  it("refuses globex's second knowledge-base search in a minute once, by its limit, and says when it resets", async () => {
    const { result } = await demoTrace();
    const searches = result.outcomes.filter((o) => o.tenant === 'globex' && o.toolName === 'search_kb');

    expect(searches.map((o) => o.kind)).toEqual(['result', 'refused']);
    expect(searches[1]).toMatchObject({
      gate: 'limits',
      code: 'RATE_LIMITED',
      retryable: true,
      ran: false,
    });
    expect(searches[1]!.content).toMatch(
      /the rate limit 'kb-searches' \(1 call per minute for each tenant\) is used up.*room again in 60 s/,
    );
    expect(result.outcomes.filter((o) => o.kind === 'refused' && o.gate === 'limits')).toHaveLength(1);
  });

  const redisUrl = process.env['TOOLGATE_REDIS_URL'];
  (postgresUrl === undefined || redisUrl === undefined ? it.skip : it)(
    'with both servers there, check-ins live in PostgreSQL, limits in Redis, and the limit still refuses once',
    async () => {
      const { result, lines } = await demoTrace({ store: 'postgres' });

      expect(lines.join('\n')).toMatch(/PostgreSQL \(schema toolgate_demo .*\),\s+limits in Redis/);
      expect(result.outcomes.filter((o) => o.kind === 'refused' && o.gate === 'limits')).toHaveLength(1);
    },
  );

  it.each([80, 60, 132])('fits every line of the trace in %i columns', async (width) => {
    const { lines } = await demoTrace({ width, decide: 'unanswered' });
    const { lines: approved } = await demoTrace({ width });
    // Counted in characters as a terminal shows them (✓, →, ─ are one column each).
    const tooWide = [...lines, ...approved].filter((line) => [...line].length > width);
    expect(tooWide).toEqual([]);
    expect(approved.length).toBeGreaterThan(100);
  });

  it('cuts what the model reads at a word, and shows all of it with --verbose', async () => {
    const refusal = /^ {2}model reads: \[capabilities refused: 'search_kb'/;
    const readsOf = (lines: string[]) => {
      const at = lines.findIndex((line) => refusal.test(line));
      const block = [lines[at]!];
      for (const line of lines.slice(at + 1)) {
        if (!line.startsWith('    ')) break;
        block.push(line);
      }
      return block;
    };
    const short = readsOf((await demoTrace()).lines);
    expect(short).toHaveLength(3);
    expect(short[2]).toMatch(/ \S+ …$/);
    const full = readsOf((await demoTrace({ verbose: true })).lines).join(' ');
    expect(full.replace(/\s+/g, ' ')).toContain('Continue without it, or tell the user what you cannot do.]');
  });

  it('accepts the `--` that `pnpm demo -- --yes` passes through', () => {
    const parsed = parseDemoArgs(['--', '--yes', '--verbose'], { interactive: false, color: false });
    expect(parsed).toMatchObject({ ok: true, options: { decide: 'approve', verbose: true } });
  });

  it('says in the closing notes which call paused and who approved it', async () => {
    const { lines } = await demoTrace();
    expect(lines.join('\n')).toMatch(
      /#9 issue_refund paused for a check-in; approved by supervisor \(--yes\), note:\s+damage\s+confirmed\s+from\s+photos, then ran/,
    );
  });

  it('labels the ceiling’s after-half, and says the tool ran but its result was withheld', async () => {
    const { lines } = await demoTrace();
    const ceilingRows = lines.filter((line) => /^ {4}. result-ceiling/.test(line));
    expect(
      ceilingRows.some((line) => /result-ceiling \(after\) +deny .*14,945 > 2,000 characters/.test(line)),
    ).toBe(true);
    expect(ceilingRows.filter((line) => / deny /.test(line)).every((line) => line.includes('(after)'))).toBe(
      true,
    );
    expect(lines.join('\n')).toMatch(
      /→ refused by result-ceiling .*\s+·? ?the tool ran, but its result was withheld from the model/,
    );
  });
});

describe('the support-desk demo with --inbox', () => {
  /** A person at the inbox, through its JSON API: waits for the refund, then decides it. */
  function personAtTheInbox(decide: (id: string) => { path: 'approve' | 'decline'; body: object }) {
    let done: Promise<unknown> = Promise.resolve();
    const onInbox = ({ url, token }: { url: string; token: string }) => {
      const api = `${url}api/check-ins`;
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      done = (async () => {
        for (;;) {
          const listed = (await (await fetch(api, { headers })).json()) as {
            checkIns: Array<{ id: string }>;
          };
          const waiting = listed.checkIns[0];
          if (waiting !== undefined) {
            const { path, body } = decide(waiting.id);
            const response = await fetch(`${api}/${waiting.id}/${path}`, {
              method: 'POST',
              headers,
              body: JSON.stringify(body),
            });
            return response.json();
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
    };
    return { onInbox, decided: () => done };
  }

  it('parses --inbox and --inbox-port, and refuses them beside --yes or --no', () => {
    const parse = (argv: string[]) => parseDemoArgs(argv, { interactive: false, color: false });
    expect(parse(['--inbox'])).toMatchObject({ ok: true, options: { decide: 'inbox' } });
    expect(parse(['--inbox', '--inbox-port', '8788'])).toMatchObject({
      ok: true,
      options: { decide: 'inbox', inboxPort: 8788 },
    });
    expect(parse(['--inbox', '--yes'])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/contradict/),
    });
    expect(parse(['--inbox-port', '8788'])).toMatchObject({ ok: false });
    expect(parse(['--inbox', '--inbox-port', 'http'])).toMatchObject({ ok: false });
  });

  it('the refund waits in the inbox at a printed local URL until a person approves it there', async () => {
    const person = personAtTheInbox(() => ({ path: 'approve', body: { note: 'photos look right' } }));
    const { lines, result } = await demoTrace({ decide: 'inbox', onInbox: person.onInbox });
    expect(lines.some((line) => /approval inbox: http:\/\/127\.0\.0\.1:\d+\/inbox\//.test(line))).toBe(true);
    expect(lines.some((line) => line.includes('waiting in the inbox:'))).toBe(true);
    expect(await person.decided()).toMatchObject({
      checkIn: { decision: { approved: true, by: 'supervisor' } },
    });
    expect(result.refundsIssued).toBe(1);
    expect(result.decisions[0]).toMatchObject({
      approved: true,
      by: 'supervisor',
      note: 'photos look right',
    });
    expect(result.finalWords['acme']).toMatch(/^Refunded 250 EUR to Ada Park/);
  });

  it('a person who narrows the refund in the inbox refunds the narrower amount', async () => {
    const person = personAtTheInbox(() => ({
      path: 'approve',
      body: { args: { customerId: 'c_42', amount: 80, reason: 'damaged on arrival' } },
    }));
    const { result } = await demoTrace({ decide: 'inbox', onInbox: person.onInbox });
    expect(result.refundsIssued).toBe(1);
    expect(result.finalWords['acme']).toMatch(/^Refunded 80 EUR to Ada Park/);
    const refund = result.outcomes.find((o) => o.kind === 'result' && o.toolName === 'issue_refund');
    expect(refund?.kind === 'result' ? refund.receipts?.[0]?.askedArgsDigest : undefined).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });

  it('a person who declines in the inbox: no refund, and the model reads the reason', async () => {
    const person = personAtTheInbox(() => ({
      path: 'decline',
      body: { reason: 'refunds are frozen today' },
    }));
    const { result } = await demoTrace({ decide: 'inbox', onInbox: person.onInbox });
    expect(result.refundsIssued).toBe(0);
    expect(result.finalWords['acme']).toContain('refunds are frozen today');
  });
});
