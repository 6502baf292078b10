// What every PinStore must do: pin on first sight (once, also under parallel observers), never move
// a pin except through accept with the reviewed digest, record and clear a served change, keep
// sources, kinds and names apart, and round-trip definitions as JSON.

import { expect } from '@jest/globals';
import type { PinObservation, PinStore } from '@toolgate/core';

export interface PinStoreLaw {
  readonly title: string;
  readonly check: (store: PinStore) => Promise<void>;
}

const AT = '2030-01-01T00:00:00.000Z';
const LATER = '2030-01-02T00:00:00.000Z';
const digest = (n: number) => n.toString(16).padStart(64, '0');
const seen = (
  n: number,
  name = 'search',
  source = 'docs',
  kind: 'tool' | 'server' = 'tool',
): PinObservation => ({
  source,
  kind,
  name,
  digest: digest(n),
  definition: {
    name,
    description: `version ${n}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  },
});

export const PIN_STORE_LAWS: readonly PinStoreLaw[] = [
  {
    title: 'pins a definition on first sight, and a second look at the same one changes nothing',
    async check(store) {
      const first = await store.observe(seen(1), AT);
      expect(first).toEqual({ pinned: true, record: { ...seen(1), pinnedAt: AT } });
      const again = await store.observe(seen(1), LATER);
      expect(again).toEqual({ pinned: false, record: { ...seen(1), pinnedAt: AT } });
      expect(await store.get('docs', 'tool', 'search')).toEqual({ ...seen(1), pinnedAt: AT });
    },
  },
  {
    title:
      'records a different definition as changed beside the pin, and clears it when the pinned one is served again',
    async check(store) {
      await store.observe(seen(1), AT);
      const changed = await store.observe(seen(2), LATER);
      expect(changed.pinned).toBe(false);
      expect(changed.record).toEqual({
        ...seen(1),
        pinnedAt: AT,
        changed: { digest: digest(2), definition: seen(2).definition, seenAt: LATER },
      });
      expect((await store.get('docs', 'tool', 'search'))!.digest).toBe(digest(1));
      const reverted = await store.observe(seen(1), LATER);
      expect(reverted.record).toEqual({ ...seen(1), pinnedAt: AT });
    },
  },
  {
    title: 'accepts only the changed digest that was reviewed, and then that definition is the pin',
    async check(store) {
      await store.observe(seen(1), AT);
      expect(await store.accept('docs', 'tool', 'search', digest(2), LATER)).toBe(false);
      await store.observe(seen(2), AT);
      await store.observe(seen(3), AT);
      expect(await store.accept('docs', 'tool', 'search', digest(2), LATER)).toBe(false);
      expect(await store.accept('docs', 'tool', 'search', digest(3), LATER)).toBe(true);
      expect(await store.get('docs', 'tool', 'search')).toEqual({ ...seen(3), pinnedAt: LATER });
      expect(await store.accept('docs', 'tool', 'search', digest(3), LATER)).toBe(false);
      expect((await store.observe(seen(3), LATER)).record.changed).toBeUndefined();
      expect(await store.accept('docs', 'tool', 'unknown', digest(3), LATER)).toBe(false);
    },
  },
  {
    title: 'pins once when many observers see a new tool at the same time',
    async check(store) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.observe(seen(1 + (i % 2)), AT)),
      );
      expect(answers.filter((answer) => answer.pinned)).toHaveLength(1);
      const pinned = (await store.get('docs', 'tool', 'search'))!.digest;
      expect([digest(1), digest(2)]).toContain(pinned);
    },
  },
  {
    title: 'keeps sources, kinds and names apart, and lists by source, kind and change in order',
    async check(store) {
      await store.observe(seen(1, 'search', 'docs'), AT);
      await store.observe(seen(1, 'fetch', 'docs'), AT);
      await store.observe(seen(1, 'search', 'billing'), AT);
      await store.observe(seen(1, '', 'docs', 'server'), AT);
      await store.observe(seen(2, 'search', 'docs'), AT);
      expect((await store.get('billing', 'tool', 'search'))!.changed).toBeUndefined();
      const keys = (records: { source: string; kind: string; name: string }[]) =>
        records.map((r) => `${r.source}/${r.kind}/${r.name}`);
      expect(keys(await store.list())).toEqual([
        'billing/tool/search',
        'docs/server/',
        'docs/tool/fetch',
        'docs/tool/search',
      ]);
      expect(keys(await store.list({ source: 'docs', kind: 'tool' }))).toEqual([
        'docs/tool/fetch',
        'docs/tool/search',
      ]);
      expect(keys(await store.list({ changed: true }))).toEqual(['docs/tool/search']);
      expect(keys(await store.list({ changed: false, kind: 'server' }))).toEqual(['docs/server/']);
      expect(await store.get('docs', 'tool', 'missing')).toBeUndefined();
    },
  },
  {
    title: 'round-trips definitions as JSON, whatever their text',
    async check(store) {
      const odd: PinObservation = {
        ...seen(7, 'it\'s "odd" ☃ \u202E'),
        definition: {
          description: 'quotes \' " and \\ and \n newlines',
          nested: { list: [1, null, true, 'x'] },
        },
      };
      await store.observe(odd, AT);
      expect(await store.get('docs', 'tool', odd.name)).toEqual({ ...odd, pinnedAt: AT });
    },
  },
];
