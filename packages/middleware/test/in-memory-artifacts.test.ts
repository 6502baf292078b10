import { isArtifactRef } from '@toolgate/core';
import { inMemoryArtifacts } from '@toolgate/middleware';
import { manualClock } from './fixtures';

const ACME = { tenant: 'acme', principal: 'ann', conversation: 'c1' };

describe('inMemoryArtifacts', () => {
  it('stores an artifact under a fresh art_ ref and returns its meta and data in the same scope', async () => {
    const clock = manualClock(Date.parse('2031-01-01T00:00:00.000Z'));
    const store = inMemoryArtifacts({ now: clock.now });

    const ref = await store.put(ACME, {
      kind: 'report/rows',
      data: { rows: [1, 2] },
      meta: { title: 'Q1' },
      ttlMs: 1000,
    });

    expect(isArtifactRef(ref)).toBe(true);
    expect(await store.get(ACME, ref)).toEqual({
      meta: {
        ref,
        kind: 'report/rows',
        createdAt: '2031-01-01T00:00:00.000Z',
        expiresAt: '2031-01-01T00:00:01.000Z',
        meta: { title: 'Q1' },
      },
      data: { rows: [1, 2] },
    });
  });

  it('gives every put its own ref', async () => {
    const store = inMemoryArtifacts();
    const refs = new Set<string>();

    for (let i = 0; i < 50; i++) refs.add(await store.put(ACME, { kind: 'k', data: i }));

    expect(refs.size).toBe(50);
  });

  it('answers undefined for another tenant, principal or conversation, exactly as for an unknown ref', async () => {
    const store = inMemoryArtifacts();
    const ref = await store.put(ACME, { kind: 'k', data: 'secret rows' });

    expect(await store.get({ ...ACME, tenant: 'globex' }, ref)).toBeUndefined();
    expect(await store.get({ ...ACME, principal: 'bob' }, ref)).toBeUndefined();
    expect(await store.get({ ...ACME, conversation: 'c2' }, ref)).toBeUndefined();
    expect(await store.get({}, ref)).toBeUndefined();
    expect(await store.get(ACME, 'art_0000000000000000000000')).toBeUndefined();
  });

  it('treats a missing scope field and an empty one as the same scope', async () => {
    const store = inMemoryArtifacts();
    const ref = await store.put({ tenant: 'acme' }, { kind: 'k', data: 1 });

    expect(await store.get({ tenant: 'acme', principal: '', conversation: '' }, ref)).toBeDefined();
  });

  it('hides an artifact once its ttl has passed, from get and from list', async () => {
    const clock = manualClock();
    const store = inMemoryArtifacts({ now: clock.now });
    const ref = await store.put(ACME, { kind: 'k', data: 1, ttlMs: 500 });

    clock.advance(499);
    expect(await store.get(ACME, ref)).toBeDefined();
    clock.advance(1);

    expect(await store.get(ACME, ref)).toBeUndefined();
    expect(await store.list(ACME, 'k', 10)).toEqual([]);
  });

  it('lists live artifacts of one kind in one scope, newest first, up to the limit', async () => {
    const store = inMemoryArtifacts();
    const refs: string[] = [];
    for (let i = 0; i < 5; i++) refs.push(await store.put(ACME, { kind: 'k', data: i }));
    await store.put(ACME, { kind: 'other', data: 0 });
    await store.put({ tenant: 'globex' }, { kind: 'k', data: 0 });

    const listed = await store.list(ACME, 'k', 3);

    expect(listed.map((meta) => meta.ref)).toEqual([refs[4], refs[3], refs[2]]);
    expect(listed.every((meta) => meta.kind === 'k')).toBe(true);
    expect(listed[0]).not.toHaveProperty('data');
  });

  it('never lists more than maxList, whatever the caller asks', async () => {
    const store = inMemoryArtifacts({ maxList: 2 });
    for (let i = 0; i < 4; i++) await store.put(ACME, { kind: 'k', data: i });

    expect(await store.list(ACME, 'k', 100)).toHaveLength(2);
  });

  it('keeps its own copies, so neither the caller nor a reader can change what it holds', async () => {
    const store = inMemoryArtifacts();
    const data = { rows: ['a'] };
    const ref = await store.put(ACME, { kind: 'k', data });

    data.rows.push('written after put');
    const first = await store.get(ACME, ref);
    (first?.data as { rows: string[] }).rows.push('written by a reader');

    expect((await store.get(ACME, ref))?.data).toEqual({ rows: ['a'] });
  });

  it('refuses a blank kind or a non-positive ttl', async () => {
    const store = inMemoryArtifacts();

    await expect(store.put(ACME, { kind: ' ', data: 1 })).rejects.toThrow(/kind must be a non-empty string/);
    await expect(store.put(ACME, { kind: 'k', data: 1, ttlMs: 0 })).rejects.toThrow(
      /ttlMs must be a positive number/,
    );
    await expect(store.put(ACME, { kind: 'k', data: 1, ttlMs: Number.NaN })).rejects.toThrow(/ttlMs/);
  });
});
