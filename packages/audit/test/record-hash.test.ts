// The chain hash a record is sealed with (one sorted literal, one JSON.stringify) is the SHA-256 of its
// canonical JSON, as verification recomputes it: with every field set, with fields left out, with
// text that needs escaping, and with a value of another type (then canonicalJson itself is used).

import fc from 'fast-check';
import {
  HASHED_KEYS,
  isoTime,
  RECORD_FIELDS,
  recordHash,
  sealRecords,
  sortedHashedBody,
  type AuditFields,
} from '../src/record';

const sign = () => 'ab'.repeat(64);
const FIELDS = RECORD_FIELDS.filter((key) => !['seq', 'prevHash', 'hash', 'signature'].includes(key));

describe('the chain hash of a sealed record', () => {
  it('writes every hashed field, and only those, in sorted order', () => {
    const every = Object.fromEntries(HASHED_KEYS.map((key) => [key, key]));
    expect(Object.keys(sortedHashedBody(every))).toEqual(HASHED_KEYS);
    expect(HASHED_KEYS).toEqual([...RECORD_FIELDS].filter((k) => k !== 'hash' && k !== 'signature').sort());
  });

  it('is the SHA-256 of the canonical JSON for records with any fields set, left out, or needing escapes', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const fields = fc.record(
      Object.fromEntries(FIELDS.map((key) => [key, key === 'ran' ? fc.boolean() : text])) as Record<
        string,
        fc.Arbitrary<unknown>
      >,
      { requiredKeys: ['at', 'kind', 'ran'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fields, { minLength: 1, maxLength: 4 }), async (batch) => {
        const sealed = await sealRecords(undefined, batch as unknown as AuditFields[], sign);
        for (const record of sealed) expect(record.hash).toBe(await recordHash(record as never));
      }),
      { numRuns: 200 },
    );
  });

  it('falls back to canonical JSON for a value of another type', async () => {
    const odd = {
      at: 'now',
      kind: 'result',
      ran: true,
      rule: { nested: [1, 'two'] },
    } as unknown as AuditFields;
    const [record] = await sealRecords(undefined, [odd], sign);
    expect(record!.hash).toBe(await recordHash(record as never));
  });
});

describe("a record's time", () => {
  it('is the ISO text toISOString writes, for any time a Date holds, fractions and negatives included', () => {
    const times = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
      fc.constantFrom(0, -1, 999, 1000, -1000, -1001, 8.64e15, -8.64e15, 253402300799999, 253402300800000),
    );
    // Times close together, as calls come, reuse the second's text: each is checked against a fresh Date.
    fc.assert(
      fc.property(fc.array(times, { maxLength: 8 }), fc.integer({ min: 0, max: 2500 }), (starts, step) => {
        for (const start of starts) {
          for (const ms of [start, start + step, start + step * 2]) {
            if (Math.abs(Math.trunc(ms)) > 8.64e15) continue;
            expect(isoTime(ms)).toBe(new Date(ms).toISOString());
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('throws as toISOString does for a time no Date holds', () => {
    for (const ms of [NaN, Infinity, 8.64e15 + 1, -8.64e15 - 1]) {
      expect(() => isoTime(ms)).toThrow(RangeError);
    }
  });
});
