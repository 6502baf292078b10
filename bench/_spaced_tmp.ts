import { createDispatcher, defineTool, type Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { auditLog, generateAuditKeys, inMemoryAuditStore } from '@toolgate/audit';
const tool = defineTool({
  name: 'lookup', description: 'x',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
  execute: async (args: { order?: string }) => ({ order: args.order ?? '', status: 'shipped' }),
});
const call = { toolName: 'lookup', args: { order: 'A-1' } };
const identity = { tenant: 'acme', principal: 'bench' };
const GAP = Number(process.env.GAP ?? 3);
const N = Number(process.env.N ?? 300);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function sample(d: Dispatcher) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) { await d.dispatch(call, { identity }); await sleep(GAP); }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / N;
}
const keys = await generateAuditKeys();
const digestKey = 'bench-digest-key-0123456789abcdefghijklmnop';
const base = createDispatcher({ tools: [tool], chain: canonicalChain() });
const mk = (o: object) => auditLog({ store: inMemoryAuditStore(), signingKey: keys.privateKey, digestKey, durability: 'batch', ...o }).attach(createDispatcher({ tools: [tool], chain: canonicalChain() }));
const variants: Record<string, Dispatcher> = { bare: base, bare2: createDispatcher({ tools: [tool], chain: canonicalChain() }), batch5: mk({}), batch0: mk({ commitWindowMs: 0 }), batch20: mk({ commitWindowMs: 20 }), batch50: mk({ commitWindowMs: 50 }) };
for (const d of Object.values(variants)) for (let i = 0; i < 200; i++) await d.dispatch(call, { identity });
const res: Record<string, number[]> = {};
for (let r = 0; r < 5; r++) for (const [k, d] of Object.entries(variants)) (res[k] ??= []).push(await sample(d));
for (const [k, v] of Object.entries(res)) console.log(k, v.map((x) => x.toFixed(0)).join(' '), 'median', [...v].sort((a,b)=>a-b)[2]!.toFixed(0));
