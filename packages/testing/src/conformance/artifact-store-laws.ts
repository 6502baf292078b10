// What every ArtifactStore must do: keep each scope to itself, keep kinds, forget expired
// artifacts, list newest first, and hand data back exactly as it was stored.

import { expect } from '@jest/globals';
import { createDispatcher, isArtifactRef, type ArtifactScope, type ArtifactStore } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import type { FixedClock } from '../clock';
import { seededIds } from '../ids';
import { mockTool } from '../mock-tool';

export interface ArtifactStoreLawContext {
  readonly store: ArtifactStore;
  readonly clock: FixedClock;
}

export interface ArtifactStoreLaw {
  readonly title: string;
  readonly check: (context: ArtifactStoreLawContext) => Promise<void>;
}

const ANA: ArtifactScope = { tenant: 'acme', principal: 'ana', conversation: 'c-1' };
const ROWS = 'dataset/rows';
const UNKNOWN_REF = `art_${'0'.repeat(22)}`;

export const ARTIFACT_STORE_LAWS: readonly ArtifactStoreLaw[] = [
  {
    title: 'put returns a fresh art_ ref every time',
    async check({ store }) {
      const first = await store.put(ANA, { kind: ROWS, data: [1] });
      const second = await store.put(ANA, { kind: ROWS, data: [1] });
      expect(isArtifactRef(first)).toBe(true);
      expect(isArtifactRef(second)).toBe(true);
      expect(second).not.toBe(first);
    },
  },
  {
    title: 'get returns the data and metadata in the same scope',
    async check({ store, clock }) {
      const ref = await store.put(ANA, {
        kind: ROWS,
        data: { rows: [{ id: 1 }] },
        meta: { source: 'crm', count: 1 },
      });
      const found = await store.get(ANA, ref);
      expect(found).toStrictEqual({
        meta: { ref, kind: ROWS, createdAt: clock.iso(), meta: { source: 'crm', count: 1 } },
        data: { rows: [{ id: 1 }] },
      });
    },
  },
  {
    title: 'another tenant, principal or conversation reads a ref exactly like an unknown one',
    async check({ store }) {
      const ref = await store.put(ANA, { kind: ROWS, data: 'secret rows' });
      for (const scope of [
        { ...ANA, tenant: 'globex' },
        { ...ANA, principal: 'bob' },
        { ...ANA, conversation: 'c-2' },
        {},
      ]) {
        await expect(store.get(scope, ref)).resolves.toBeUndefined();
        await expect(store.list(scope, ROWS, 10)).resolves.toEqual([]);
      }
    },
  },
  {
    title: 'an unknown or malformed ref reads as undefined',
    async check({ store }) {
      await store.put(ANA, { kind: ROWS, data: 1 });
      await expect(store.get(ANA, UNKNOWN_REF)).resolves.toBeUndefined();
      await expect(store.get(ANA, 'not-a-ref')).resolves.toBeUndefined();
      await expect(store.get(ANA, '')).resolves.toBeUndefined();
    },
  },
  {
    title: "keeps each artifact's kind, so a gate can check it",
    async check({ store }) {
      const rows = await store.put(ANA, { kind: ROWS, data: [] });
      const text = await store.put(ANA, { kind: 'text/plain', data: 'hello' });
      expect((await store.get(ANA, rows))?.meta.kind).toBe(ROWS);
      expect((await store.get(ANA, text))?.meta.kind).toBe('text/plain');
    },
  },
  {
    title: 'rejects an artifact without a kind',
    async check({ store }) {
      await expect(store.put(ANA, { kind: '', data: 1 })).rejects.toThrow();
    },
  },
  {
    title: 'list returns live artifacts of one kind in one scope, newest first, at most limit',
    async check({ store, clock }) {
      const oldest = await store.put(ANA, { kind: ROWS, data: 1 });
      clock.advance(1000);
      const middle = await store.put(ANA, { kind: ROWS, data: 2 });
      clock.advance(1000);
      const newest = await store.put(ANA, { kind: ROWS, data: 3 });
      const text = await store.put(ANA, { kind: 'text/plain', data: 'x' });
      await store.put({ ...ANA, tenant: 'globex' }, { kind: ROWS, data: 4 });

      const refs = async (kind: string, limit: number) =>
        (await store.list(ANA, kind, limit)).map((meta) => meta.ref);
      expect(await refs(ROWS, 10)).toEqual([newest, middle, oldest]);
      expect(await refs(ROWS, 2)).toEqual([newest, middle]);
      expect(await refs('text/plain', 10)).toEqual([text]);
      expect(await refs('image/png', 10)).toEqual([]);
      const [meta] = await store.list(ANA, ROWS, 1);
      expect(meta).toMatchObject({ ref: newest, kind: ROWS, createdAt: clock.iso() });
    },
  },
  {
    title: 'an artifact is gone from get and list once its ttl has passed',
    async check({ store, clock }) {
      const ref = await store.put(ANA, { kind: ROWS, data: 1, ttlMs: 1000 });
      expect((await store.get(ANA, ref))?.meta.expiresAt).toBe(new Date(clock.now() + 1000).toISOString());
      clock.advance(999);
      expect((await store.get(ANA, ref))?.data).toBe(1);
      clock.advance(1);
      await expect(store.get(ANA, ref)).resolves.toBeUndefined();
      await expect(store.list(ANA, ROWS, 10)).resolves.toEqual([]);
    },
  },
  {
    title: 'data and metadata come back exactly as stored (JSON round trip)',
    async check({ store }) {
      const data = {
        text: 'Zoë — “quoted” \\ back\nslash 日本語',
        numbers: [0, -1, 2.5, 1e21],
        flags: [true, false, null],
        nested: { deep: { deeper: [{ a: 1 }, {}] }, empty: [] },
      };
      const ref = await store.put(ANA, { kind: ROWS, data, meta: { columns: ['a', 'b'], note: 'ü' } });
      const found = await store.get(ANA, ref);
      expect(found?.data).toStrictEqual(data);
      expect(found?.meta.meta).toStrictEqual({ columns: ['a', 'b'], note: 'ü' });
      expect(JSON.parse(JSON.stringify(found))).toStrictEqual(found);
    },
  },
  {
    title: 'changing data after put or after get does not change the store',
    async check({ store }) {
      const data = { rows: [{ id: 1 }] };
      const ref = await store.put(ANA, { kind: ROWS, data });
      data.rows.push({ id: 2 });
      const found = await store.get(ANA, ref);
      expect(found?.data).toStrictEqual({ rows: [{ id: 1 }] });
      try {
        (found!.data as { rows: unknown[] }).rows.push({ id: 3 });
      } catch {
        // A store may hand out frozen data; that is isolation too.
      }
      expect((await store.get(ANA, ref))?.data).toStrictEqual({ rows: [{ id: 1 }] });
    },
  },
  {
    title: "serves the wants gate: the tool gets the data, another tenant's ref is refused",
    async check({ store }) {
      const tool = mockTool({ name: 'summarize', wants: { rows: ROWS } });
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ artifacts: store }),
        callIds: seededIds('wants'),
      });
      const ref = await store.put(ANA, { kind: ROWS, data: [{ id: 1 }] });
      const own = await dispatcher.dispatch(
        { toolName: 'summarize', args: { rows: ref } },
        { identity: ANA },
      );
      expect(own.kind).toBe('result');
      expect(tool.lastCall?.args).toStrictEqual({ rows: [{ id: 1 }] });

      const globex = { ...ANA, tenant: 'globex' };
      const theirs = await store.put(globex, { kind: ROWS, data: [{ id: 2 }] });
      const stolen = await dispatcher.dispatch(
        { toolName: 'summarize', args: { rows: theirs } },
        { identity: ANA },
      );
      expect(stolen).toMatchObject({ kind: 'refused', gate: 'wants', code: 'ARTIFACT_NOT_FOUND' });
      expect(stolen.content).toContain(ref);
      expect(stolen.content).not.toContain(theirs);
      expect(tool.callCount).toBe(1);
    },
  },
];
