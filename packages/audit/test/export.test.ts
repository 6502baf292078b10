// exportAuditLog and parseAuditLog: the log as JSON lines, one record per line in seq order with its
// fields in record order, read back exactly, and a broken line named by number.

import {
  AuditConfigError,
  AuditLogFormatError,
  auditLog,
  exportAuditLog,
  inMemoryAuditStore,
  parseAuditLog,
  RECORD_FIELDS,
} from '@toolgate/audit';
import { DIGEST_KEY, PRIVATE_PEM, recordsOf } from '../../../test-support/audit-fixtures';

async function linesOf(
  source: Parameters<typeof exportAuditLog>[0],
  options?: Parameters<typeof exportAuditLog>[1],
) {
  let text = '';
  for await (const line of exportAuditLog(source, options)) text += line;
  return text;
}

async function writtenStore(length: number) {
  const store = inMemoryAuditStore();
  const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY });
  for (let i = 0; i < length; i++)
    await audit.record({ kind: 'config.reloaded', approver: `ops-${i}`, args: { i } });
  return store;
}

describe('exportAuditLog()', () => {
  it('writes one JSON line per record, in seq order, fields in record order, across store pages', async () => {
    const store = await writtenStore(1_203);
    const text = await linesOf(store);
    const lines = text.split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(1_204);
    const records = await recordsOf(store);
    expect(lines.slice(0, -1)).toEqual(records.map((r) => JSON.stringify(r)));
    const order = Object.keys(JSON.parse(lines[0]!) as object);
    expect(order).toEqual(RECORD_FIELDS.filter((field) => order.includes(field)));
  });

  it('gives the whole text when awaited', async () => {
    const store = await writtenStore(3);
    const text = await exportAuditLog(store);
    expect(text).toBe(await linesOf(store));
    expect(text.split('\n')).toHaveLength(4);
  });

  it('starts after a seq when asked, from a store or from records', async () => {
    const store = await writtenStore(5);
    const tail = parseAuditLog(await linesOf(store, { after: 3 }));
    expect(tail.map((r) => r.seq)).toEqual([4, 5]);
    expect(parseAuditLog(await linesOf(await recordsOf(store), { after: 4 })).map((r) => r.seq)).toEqual([5]);
    expect(() => exportAuditLog(store, { after: -1 })).toThrow(AuditConfigError);
    expect(() => exportAuditLog(42 as never)).toThrow('exportAuditLog: expected an AuditStore');
  });
});

describe('parseAuditLog()', () => {
  it('reads back exactly what was exported, skipping blank lines', async () => {
    const store = await writtenStore(3);
    const text = await linesOf(store);
    expect(parseAuditLog(`\n${text}\n\n`)).toEqual(await recordsOf(store));
  });

  it('names the first line that is not a JSON object', () => {
    expect(() => parseAuditLog('{"seq":1}\n[1,2]\n')).toThrow(new AuditLogFormatError(2));
    expect(() => parseAuditLog('{"seq":1}\n{"seq":2}\n{"seq": 3')).toThrow(
      'parseAuditLog: line 3 is not a JSON object; an exported audit log has one record per line.',
    );
  });
});
