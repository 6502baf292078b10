// `node --expose-gc --import tsx bench/gateway/heap-per-session.ts`: the V8 heap an open 2025-11-25
// session holds in the governing gateway (bench:gateway's configuration, `createGateway` in this
// process), the growth of the heap after a full GC while N (default 1,000) sessions are opened, each
// with `initialize` and `notifications/initialized` and, with CALL=1, one tools/call. Sharper than
// bench:gateway's RSS slope, which moves with the allocator and the machine. AUDIT=off runs the
// audit-off twin. Needs node:sqlite (Node 22.13+). Nothing asserted.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway } from '@toolgate/gateway';
import { BENCH_TOKEN, writeGoverningConfig } from './processes';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('bench: run node with --expose-gc');
const N = Number(process.env['N'] ?? 1000);
const audit = process.env['AUDIT'] !== 'off';
const config = writeGoverningConfig(mkdtempSync(join(tmpdir(), 'toolgate-heap-')), {
  audit,
  maxSessions: N + 100,
});
const gateway = await createGateway(config, { port: 0, log: () => undefined });
const url = gateway.url!;
const headers = {
  authorization: `Bearer ${BENCH_TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

async function post(body: unknown, session?: string): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    headers:
      session === undefined
        ? headers
        : { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(body),
  });
  await response.text();
  if (!response.ok) throw new Error(`bench: the gateway answered HTTP ${response.status}`);
  return response;
}

async function open(): Promise<void> {
  const initialized = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'heap', version: '1' } },
  });
  const session = initialized.headers.get('mcp-session-id');
  if (session === null) throw new Error('bench: the gateway opened no session');
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  if (process.env['CALL'] === '1')
    await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      session,
    );
}

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().heapUsed;
}

// The first sessions build what every session shares (compiled schemas, code, caches).
for (let i = 0; i < 20; i++) await open();
const before = await settledHeap();
for (let i = 0; i < N; i++) await open();
const after = await settledHeap();
console.log(
  `heap per open session (audit ${audit ? 'on' : 'off'}${process.env['CALL'] === '1' ? ', one call each' : ''}, ${N} sessions, node ${process.version}): ${((after - before) / N / 1024).toFixed(1)} kB`,
);
await gateway.close();
