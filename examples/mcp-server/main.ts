// A governed MCP server: three order-desk tools behind the canonical chain, served over stdio
// (default) or Streamable HTTP (`--http`). Any MCP client can connect; refunds ask the person at
// the client through elicitation, and refusals come back as tool errors the model can read.
//
//   stdio:  npx -y pnpm@12.4.2 mcp:serve
//   HTTP:   npx -y pnpm@12.4.2 mcp:serve --http        (PORT, default 3333; TOOLGATE_TOKEN for a bearer token)
//
// It stops cleanly, closing its sessions and freeing its port, on SIGINT or SIGTERM, when stdin
// closes (over stdio: the client went away), and when the process that started it exits.
// stdout carries the protocol over stdio, so everything this program says goes to stderr.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import { defineTool, type PermissionChecker } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, serveHttp, serveStdio } from '@toolgate/mcp';
import { whenStartersExit } from './lifetime';

const orders: Record<string, { customer: string; total: number; refunded: number }> = {
  'A-17': { customer: 'Ada', total: 120, refunded: 0 },
  'B-42': { customer: 'Grace', total: 900, refunded: 0 },
};

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id: customer, total and amount refunded so far.',
  inputSchema: Type.Object({ orderId: Type.String({ description: "e.g. 'A-17'" }) }),
  execute: ({ orderId }) => {
    const order = orders[orderId];
    if (order === undefined)
      throw new Error(`there is no order '${orderId}'; known orders: ${Object.keys(orders).join(', ')}`);
    return { orderId, ...order };
  },
});

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund part of an order. A person approves every refund.',
  inputSchema: Type.Object({ orderId: Type.String(), amount: Type.Number({ exclusiveMinimum: 0 }) }),
  capabilities: ['payments'],
  checkIn: 'always',
  execute: ({ orderId, amount }) => {
    const order = orders[orderId];
    if (order === undefined) throw new Error(`there is no order '${orderId}'`);
    if (order.refunded + amount > order.total)
      throw new Error(`only ${order.total - order.refunded} is left to refund on '${orderId}'`);
    order.refunded += amount;
    return { orderId, refunded: amount, refundedInTotal: order.refunded };
  },
});

const deleteCustomer = defineTool({
  name: 'delete_customer',
  description: 'Delete a customer and all their orders.',
  inputSchema: Type.Object({ customer: Type.String() }),
  capabilities: ['user_data'],
  execute: ({ customer }) => ({ deleted: customer }),
});

// The deployment's policy: nobody deletes customers from here, and large refunds go to finance.
const permissions: PermissionChecker = {
  governs: ['payments'],
  check: ({ capability, target, args }) => {
    if (capability === 'tool_call' && target === 'delete_customer')
      return { allow: false, reason: 'customers are deleted by the data team, not from the order desk' };
    if (capability === 'payments' && Number(args['amount']) > 500)
      return { allow: false, reason: 'refunds over 500 are made by the finance team' };
    return { allow: true };
  },
};

// Pending approvals are signed with this key; set TOOLGATE_CHECKIN_KEY to keep it across restarts.
const checkInKey = process.env['TOOLGATE_CHECKIN_KEY'] ?? randomBytes(32).toString('hex');
const token = process.env['TOOLGATE_TOKEN'];

/** Whether an Authorization header carries the configured bearer token, compared in constant time. */
function bearerMatches(header: string | undefined, expected: string): boolean {
  const given = Buffer.from(header ?? '');
  const wanted = Buffer.from(`Bearer ${expected}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

const served = mcpServe([lookupOrder, refundOrder, deleteCustomer], {
  name: 'order-desk',
  version: '1.0.0',
  chain: canonicalChain({ permissions, checkInKey, defaultMaxChars: 4000 }),
  // Over HTTP with a token, the verified client is the principal; over stdio, the local user is.
  identityFrom: (auth) => ({ principal: auth?.clientId ?? process.env['USER'] ?? 'local-user' }),
});

served.dispatcher.on('dispatch.end', (event) => {
  const how = event.gate === undefined ? event.kind : `${event.kind} by ${event.gate}`;
  console.error(`[order-desk] ${event.toolName}: ${how}${event.ran ? ' (ran)' : ''}`);
});

let serving: { close(): Promise<void> } | undefined;
let stopping = false;

/** Closes the transport and exits 0; a close that hangs is cut short with exit 1. */
function stop(why: string): void {
  if (stopping) return;
  stopping = true;
  console.error(`[order-desk] stopping: ${why}`);
  setTimeout(() => {
    console.error('[order-desk] the transport did not close within 5 s; exiting anyway');
    process.exit(1);
  }, 5000).unref();
  Promise.resolve(serving?.close()).then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

process.once('SIGINT', () => stop('SIGINT')).once('SIGTERM', () => stop('SIGTERM'));
// When the shell, pnpm or MCP client that started it is gone, so is the server.
whenStartersExit(() => stop('the process that started it exited'));

if (process.argv.includes('--http')) {
  const port = Number(process.env['PORT'] ?? 3333);
  const http = await serveHttp(served, {
    port,
    ...(token === undefined
      ? {}
      : {
          authenticate: (request) =>
            bearerMatches(request.headers.authorization, token)
              ? { token, clientId: 'order-desk-client', scopes: [] }
              : undefined,
        }),
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    console.error(`[order-desk] port ${port} is in use: stop the server holding it, or set PORT`);
    process.exit(1);
  });
  serving = http;
  console.error(
    `[order-desk] governed MCP server on ${http.url.href}${token === undefined ? '' : ' (bearer token required)'} (pid ${process.pid})`,
  );
} else {
  serving = await serveStdio(served);
  // Over stdio the client owns stdin: its end is the end of the session.
  process.stdin.once('end', () => stop('stdin closed')).once('close', () => stop('stdin closed'));
  console.error('[order-desk] governed MCP server on stdio');
}
