// Load: four processes make 2,000 calls each against one PostgreSQL check-in store, every call paused
// for approval and then resumed twice at once with the approval. No approval is lost or honoured
// twice: every call runs its tool exactly once and every check-in ends consumed with its receipt.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describePostgres, finished, lastJson, schemas, startFixture } from './support';

const PROCESSES = 4;
const CALLS = 2_000;
const IN_FLIGHT = 8;

describePostgres('load on PostgreSQL check-ins', () => {
  const schema = schemas('load');
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'toolgate-pg-load-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`${PROCESSES} processes × ${CALLS} calls, each approved twice at once, lose no approval and honour none twice`, async () => {
    const name = schema.next();
    const log = path.join(dir, 'ran.log');
    const workers = Array.from({ length: PROCESSES }, (_, worker) =>
      startFixture('load', [name, log, String(worker), String(CALLS), String(IN_FLIGHT)]),
    );
    const tallies = (await Promise.all(workers.map(finished))).map(lastJson);

    const expected = { 'resume result': CALLS, 'resume refused CHECKIN_NOT_PENDING': CALLS };
    expect(tallies).toEqual(Array(PROCESSES).fill(expected));
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(PROCESSES * CALLS);
    expect(new Set(lines).size).toBe(PROCESSES * CALLS);

    const { rows } = await schema
      .admin()
      .query(
        `SELECT state, count(*)::int AS n, count(receipt)::int AS receipts FROM "${name}".toolgate_check_ins GROUP BY state`,
      );
    expect(rows).toEqual([{ state: 'consumed', n: PROCESSES * CALLS, receipts: PROCESSES * CALLS }]);
  }, 300_000);
});
