// Property 5: tenants are isolated. Random identities put random artifacts; a ref resolves only in
// the scope that put it, and a refusal for another scope's ref is indistinguishable from the refusal
// for a ref that never existed: the same text, ledger and events once the ref itself is masked, and
// the same store calls in the same order — the gate takes no early exit on a hit in another scope.

import fc from 'fast-check';
import {
  createDispatcher,
  defineTool,
  newArtifactRef,
  scopeOf,
  type ArtifactStore,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { sqliteArtifacts } from '@toolgate/store-sqlite';
import {
  fcOptions,
  PROPERTY_TIMEOUT_MS,
  recordEvents,
  sharedValidator,
  type RecordedEvent,
} from '../../../../test-support/hardening';

const KINDS = ['doc/text', 'image/png'] as const;

/** Small pools, so scopes collide, nest and differ by one field; '' and absent are the same scope. */
const identity: fc.Arbitrary<Identity> = fc
  .record(
    {
      tenant: fc.constantFrom('acme', 'globex', '', 'a"b', 'acme '),
      principal: fc.constantFrom('alice', 'bob', ''),
      conversation: fc.constantFrom('c1', 'c2'),
    },
    { requiredKeys: [] },
  )
  .map((id) => id as Identity);

const scopeKey = (id: Identity | undefined) =>
  JSON.stringify([id?.tenant ?? '', id?.principal ?? '', id?.conversation ?? '']);

const tenantCase = fc.record({
  identities: fc.array(identity, { minLength: 1, maxLength: 4 }),
  puts: fc.array(fc.record({ by: fc.nat(), kind: fc.constantFrom(...KINDS) }), {
    minLength: 1,
    maxLength: 8,
  }),
  lookups: fc.array(fc.record({ caller: fc.nat(), ref: fc.nat() }), { minLength: 1, maxLength: 6 }),
});

interface Trace {
  readonly calls: string[];
}

/** Records every store call, with the ref masked, so two lookups can be compared call for call. */
function traced(store: ArtifactStore, trace: Trace, mask: () => string | undefined): ArtifactStore {
  const hide = (text: string) => {
    const ref = mask();
    return ref === undefined ? text : text.split(ref).join('<ref>');
  };
  return {
    put: (scope, artifact) => store.put(scope, artifact),
    get: (scope, ref) => {
      trace.calls.push(hide(`get ${scopeKey(scope)} ${ref}`));
      return store.get(scope, ref);
    },
    list: (scope, kind, limit) => {
      trace.calls.push(`list ${scopeKey(scope)} ${kind} ${String(limit)}`);
      return store.list(scope, kind, limit);
    },
  };
}

/** Everything a lookup let anyone observe, with the looked-up ref and per-call ids masked. */
function observed(
  outcome: DispatchOutcome,
  events: readonly RecordedEvent[],
  calls: readonly string[],
  ref: string,
): string {
  const { toolCallId: _id, ...rest } = outcome;
  const seen = {
    outcome: rest,
    events: events.map(({ toolCallId: _t, at: _a, durationMs: _d, ...e }) => e),
    calls,
  };
  return JSON.stringify(seen).split(ref).join('<ref>');
}

/** Both stores the repo ships: the in-memory one and the durable SQLite one. */
const STORES: ReadonlyArray<readonly [string, () => ArtifactStore & { close?: () => void }]> = [
  ['in-memory', () => inMemoryArtifacts()],
  ['SQLite', () => sqliteArtifacts({ path: ':memory:' })],
];

describe.each(STORES)('tenants are isolated (%s artifact store)', (_name, makeStore) => {
  it(
    "a ref resolves only in its own scope, and another scope's ref is refused exactly like an unknown one",
    async () => {
      await fc.assert(
        fc.asyncProperty(tenantCase, async ({ identities, puts, lookups }) => {
          const store = makeStore();
          const trace: Trace = { calls: [] };
          let masked: string | undefined;
          const received: unknown[] = [];
          const reader = defineTool({
            name: 'reader',
            description: 'reads a document',
            inputSchema: { type: 'object', properties: { doc: { type: 'string' } }, required: ['doc'] },
            wants: { doc: 'doc/text' },
            execute: (args: Record<string, unknown>) => {
              received.push(args['doc']);
              return 'read';
            },
          });
          const dispatcher = createDispatcher({
            tools: [reader],
            chain: canonicalChain({
              artifacts: traced(store, trace, () => masked),
              validator: sharedValidator,
            }),
          });
          const events = recordEvents(dispatcher);

          const stored: Array<{ ref: string; owner: Identity; kind: string; data: string }> = [];
          for (const [i, put] of puts.entries()) {
            const owner = identities[put.by % identities.length]!;
            const data = `artifact ${i}`;
            const ref = await store.put(scopeOf(owner), { kind: put.kind, data });
            stored.push({ ref, owner, kind: put.kind, data });
          }

          const lookup = async (caller: Identity, ref: string) => {
            events.length = 0;
            trace.calls.length = 0;
            received.length = 0;
            masked = ref;
            const outcome = await dispatcher.dispatch(
              { toolName: 'reader', args: { doc: ref } },
              { identity: caller },
            );
            return {
              outcome,
              seen: observed(outcome, events, [...trace.calls], ref),
              received: [...received],
            };
          };

          for (const { caller: c, ref: r } of lookups) {
            const caller = identities[c % identities.length]!;
            const target = stored[r % stored.length]!;
            const sameScope = scopeKey(caller) === scopeKey(target.owner);

            // The store alone: visible in its own scope only.
            const direct = await store.get(scopeOf(caller), target.ref);
            expect(direct === undefined ? 'hidden' : 'visible').toBe(sameScope ? 'visible' : 'hidden');

            const hit = await lookup(caller, target.ref);
            const ownDocs = stored
              .filter((s) => scopeKey(s.owner) === scopeKey(caller) && s.kind === 'doc/text')
              .map((s) => s.ref);
            if (sameScope && target.kind === 'doc/text') {
              expect(hit.outcome.kind).toBe('result');
              expect(hit.received).toEqual([target.data]);
              continue;
            }
            expect(hit.outcome).toMatchObject({ kind: 'refused', gate: 'wants', ran: false });
            expect(hit.received).toEqual([]);
            if (hit.outcome.kind !== 'refused') continue;
            if (sameScope) {
              expect(hit.outcome.code).toBe('ARTIFACT_WRONG_KIND');
              continue;
            }
            expect(hit.outcome.code).toBe('ARTIFACT_NOT_FOUND');
            // Only the caller's own live refs are offered, never the other scope's.
            const offered = hit.outcome.content.match(/art_[0-9A-Za-z]{22}/g) ?? [];
            expect(offered.filter((ref) => !ownDocs.includes(ref))).toEqual([]);
            // Indistinguishable from a ref nobody ever stored: text, ledger, events and store calls.
            const unknown = await lookup(caller, newArtifactRef());
            expect(hit.seen).toBe(unknown.seen);
          }
          store.close?.();
        }),
        fcOptions(7),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
