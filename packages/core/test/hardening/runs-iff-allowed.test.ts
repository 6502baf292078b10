// Property 1: a tool runs exactly once when, and only when, every middleware allowed it — across random
// chains (subsets and orders of the canonical gates plus custom middleware that allow, deny, transform,
// throw, return silently, call next twice or hang past the caller's deadline), random tool declarations
// and random calls. A model predicts each answer; the ledger and the events must tell the same story.

import fc from 'fast-check';
import { checkInApproved, createDispatcher, type DispatchOutcome } from '@toolgate/core';
import {
  deferred,
  fcOptions,
  flush,
  PROPERTY_TIMEOUT_MS,
  recordEvents,
  settles,
  type Deferred,
  type RecordedEvent,
} from '../../../../test-support/hardening';
import { build, predict, scenario, TENANT, type Built, type Expected } from './world';

function checkAgainst(
  outcome: DispatchOutcome,
  expected: Expected,
  events: readonly RecordedEvent[],
  built: Built,
  runsBefore: number,
): void {
  const refused = outcome.kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : {};
  const codes = typeof expected.code === 'string' ? [expected.code] : expected.code;
  const code = outcome.kind === 'refused' && codes?.includes(outcome.code) ? outcome.code : codes?.[0];
  expect({ kind: outcome.kind, ran: outcome.ran, ...refused }).toEqual({
    kind: expected.kind,
    ran: expected.ran,
    ...(expected.gate !== undefined ? { gate: expected.gate, code } : {}),
  });
  const runs = built.subject.runs.slice(runsBefore);
  expect(runs.length).toBe(outcome.ran ? 1 : 0);
  if (expected.runArgs !== undefined) expect(runs[0]).toEqual(expected.runArgs);
  if (expected.content !== undefined) expect(outcome.content).toBe(expected.content);
  expect(typeof outcome.content).toBe('string');

  // The ledger tells the same story as the outcome.
  expect(outcome.ledger.map((row) => [row.gate, row.outcome])).toEqual(expected.rows);
  for (const row of outcome.ledger) expect(row.changed).toBe(row.outcome === 'transform');
  const last = outcome.ledger[outcome.ledger.length - 1];
  if (outcome.kind === 'refused') expect(last?.why).toBe(outcome.reason);
  if (outcome.kind === 'paused') expect(last?.gate).toBe(outcome.checkIn.asker);

  // One gate.decision per ledger row, in order; dispatch.end last and agreeing; tool.start iff ran.
  const decisions = events.filter((e) => e.type === 'gate.decision');
  expect(decisions.map((e) => [e['gate'], e['outcome'], e['why'], e['changed']])).toEqual(
    outcome.ledger.map((row) => [row.gate, row.outcome, row.why, row.changed]),
  );
  const ends = events.filter((e) => e.type === 'dispatch.end');
  expect(ends).toHaveLength(1);
  expect(events[events.length - 1]?.type).toBe('dispatch.end');
  expect({ kind: ends[0]?.['kind'], ran: ends[0]?.['ran'] }).toEqual({
    kind: outcome.kind,
    ran: outcome.ran,
  });
  expect(events.filter((e) => e.type === 'tool.start')).toHaveLength(outcome.ran ? 1 : 0);
}

/** Late work (a hung gate waking up, an unawaited branch) must not change an answered call. */
async function checkSettled(
  outcome: DispatchOutcome,
  events: readonly RecordedEvent[],
  built: Built,
): Promise<void> {
  const snapshot = {
    rows: outcome.ledger.length,
    events: events.length,
    runs: built.subject.runs.length,
    content: outcome.content,
  };
  await flush();
  expect({
    rows: outcome.ledger.length,
    events: events.length,
    runs: built.subject.runs.length,
    content: outcome.content,
  }).toEqual(snapshot);
}

describe('runs iff allowed', () => {
  it(
    'execute runs exactly once when every middleware allowed and never otherwise, and the outcome agrees with the ledger',
    async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          let hang: Deferred<void> = deferred();
          const built = await build(s, { reached: () => hang.resolve() });
          const dispatcher = createDispatcher({ tools: [built.subject.tool], chain: built.chain });
          const events = recordEvents(dispatcher);
          // The caller's deadline: it fires once a hung middleware is hanging, so no wall-clock wait.
          const drive = async (start: (signal: AbortSignal) => Promise<DispatchOutcome>) => {
            hang = deferred();
            const controller = new AbortController();
            const running = start(controller.signal);
            const first = await Promise.race([
              running.then(
                () => 'done' as const,
                () => 'done' as const,
              ),
              hang.promise.then(() => 'hung' as const),
            ]);
            if (first === 'hung') controller.abort();
            return settles(running, 'dispatch');
          };

          const call = { toolName: 'subject', args: s.call.asJson ? JSON.stringify(built.args) : built.args };
          const outcome = await drive((signal) => dispatcher.dispatch(call, { identity: TENANT, signal }));
          checkAgainst(outcome, predict(s, built, false), events, built, 0);
          await checkSettled(outcome, events, built);
          if (outcome.kind !== 'paused') return;

          events.length = 0;
          const before = built.subject.runs.length;
          const resumed = await drive((signal) =>
            dispatcher.resume(outcome.checkIn, checkInApproved({ by: 'alice' }), { signal }),
          );
          checkAgainst(resumed, predict(s, built, true), events, built, before);
          await checkSettled(resumed, events, built);
        }),
        fcOptions(1),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
