// The log as JSON lines, one record per line, fields in record order: what `toolgate audit export`
// prints, and what `parseAuditLog` reads back for an offline `verifyAuditLog`.

import type { AuditRecord } from '@toolgate/core';
import { AuditConfigError, optionError } from './errors';
import { isAuditStore, storeRecords, type AuditSource } from './verify';

export interface ExportAuditLogOptions {
  /** Only records with a greater seq. Default 0: the whole log. */
  readonly after?: number;
}

/** The exported log: iterate it for one JSON line at a time, or await it for the whole text. */
export type AuditExport = AsyncIterable<string> & PromiseLike<string>;

/**
 * The log as JSON lines (each ending in `\n`), read a page at a time from a store. Iterate it to
 * stream a log of any size; await it for the text at once.
 *
 * @example
 * for await (const line of exportAuditLog(store)) process.stdout.write(line);
 * const text = await exportAuditLog(store);
 */
export function exportAuditLog(source: AuditSource, options: ExportAuditLogOptions = {}): AuditExport {
  const after = options?.after ?? 0;
  if (!(Number.isSafeInteger(after) && after >= 0)) {
    throw optionError('exportAuditLog', 'after', 'must be a non-negative integer seq');
  }
  if (
    !isAuditStore(source) &&
    (source === null ||
      typeof source !== 'object' ||
      !(Symbol.iterator in source || Symbol.asyncIterator in source))
  ) {
    throw new AuditConfigError({
      subject: 'exportAuditLog',
      problem: 'expected an AuditStore or the records in order (an array or iterable)',
    });
  }
  let whole: Promise<string> | undefined;
  const collect = async () => {
    let text = '';
    for await (const line of linesOf(source, after)) text += line;
    return text;
  };
  return {
    [Symbol.asyncIterator]: () => linesOf(source, after),
    then(onFulfilled, onRejected) {
      whole ??= collect();
      return whole.then(onFulfilled, onRejected);
    },
  };
}

async function* linesOf(source: AuditSource, after: number): AsyncGenerator<string, void, undefined> {
  const records = isAuditStore(source) ? storeRecords(source, after) : (source as AsyncIterable<unknown>);
  for await (const record of records) {
    const seq = (record as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number' && seq <= after) continue;
    yield `${JSON.stringify(record)}\n`;
  }
}

/** A line of an exported log that is not a JSON object. */
export class AuditLogFormatError extends Error {
  override readonly name = 'AuditLogFormatError';
  readonly code = 'ERR_AUDIT_LOG_FORMAT';
  constructor(readonly line: number) {
    super(`parseAuditLog: line ${line} is not a JSON object; an exported audit log has one record per line.`);
  }
}

/**
 * The records of an exported log (JSON lines; blank lines are skipped). They are only what the text
 * says until `verifyAuditLog` has checked them. Throws `AuditLogFormatError` naming the first bad line.
 */
export function parseAuditLog(text: string): AuditRecord[] {
  if (typeof text !== 'string')
    throw new AuditConfigError({
      subject: 'parseAuditLog',
      problem: 'expected the exported text (JSON lines)',
    });
  const records: AuditRecord[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new AuditLogFormatError(i + 1);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new AuditLogFormatError(i + 1);
    records.push(value as AuditRecord);
  });
  return records;
}
