import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CANONICAL_ORDER } from '@toolgate/core';
import { runDemo, type DemoOptions } from './demo';

type Event = { type: string } & Record<string, unknown>;

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
  it('lets every canonical gate and the custom policy decide at least once', async () => {
    const { events } = await demoEvents();
    const gates = decidedGates(events);
    for (const gate of [...CANONICAL_ORDER, 'refund-cap']) expect(gates).toContain(gate);
  });

  it('denies at least once at every gate the script aims at', async () => {
    const { events } = await demoEvents();
    const denied = new Set(
      events.filter((e) => e.type === 'gate.decision' && e['outcome'] === 'deny').map((e) => e['gate']),
    );
    expect([...denied].sort()).toEqual([
      'capabilities',
      'permission',
      'refund-cap',
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

  it('runs from the command line without a terminal and prints events as JSON lines', () => {
    const root = join(__dirname, '..', '..');
    const tsx = createRequire(join(root, 'package.json')).resolve('tsx');
    const run = spawnSync(
      process.execPath,
      ['--import', tsx, 'examples/support-desk/main.ts', '--json', '--yes'],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Event);
    expect(runsOf(events, 'issue_refund')).toBe(1);
  });
});
