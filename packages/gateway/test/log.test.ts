// The gateway's log: every line a run writes has a level and an `event` from LOG_EVENTS; a stdio
// upstream's stderr arrives as warn lines naming the upstream, with what the gateway handed it and
// what looks like a credential redacted, at a bounded rate.

import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../src/gateway';
import { LOG_EVENTS, type LogFields } from '../src/log';
import { followStderr, redactStderr } from '../src/upstream-stderr';
import { CHECKIN_KEY, connectClient, fixtureServer, tempDir, type TempDir } from './helpers';

const BOT = 'bot-token-0123456789abcdef-0123456789';
const API_KEY = 'upstream-api-key-4f9a1c2e7b';

describe('log lines of a gateway run', () => {
  let dir: TempDir;
  let gateway: Gateway;
  let client: Client;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    dir = tempDir();
    // Runs before the fixture server in its process: says on stderr what a careless server might.
    const shout = dir.write(
      'shout.mjs',
      `process.stderr.write('starting with API_KEY ' + process.env.API_KEY + '\\n');
process.stderr.write('calling home with Authorization: Bearer abcdefghijklmnopqrstu and password=hunter2hunter2\\n');
process.stderr.write('<script>' + 'x'.repeat(2000) + '\\n');
`,
    );
    const file = dir.write(
      'toolgate.yaml',
      `auth:
  tokens:
    - { token: "\${env:BOT}", identity: { tenant: acme, principal: support-bot } }
checkIns: { key: "${CHECKIN_KEY}", hold: 100ms }
upstreams:
  shop:
    command: [node, --import, ${JSON.stringify(shout)}, ${JSON.stringify(fixtureServer)}]
    env: { API_KEY: "\${env:API_KEY}" }
    prefix: shop_
policy:
  - { name: no-crash, tools: [shop_crash], effect: deny, reason: retired }
tenants:
  acme: { upstreams: [shop] }
`,
    );
    gateway = await createGateway(file, {
      port: 0,
      env: { BOT, API_KEY },
      log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      watch: false,
    });
    client = await connectClient(gateway.url, BOT);
    await client.callTool({ name: 'shop_echo', arguments: { text: 'hi' } });
    await client.callTool({ name: 'shop_crash', arguments: {} });
    await fetch(new URL('/mcp', gateway.url), {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'Bearer nope' },
    });
    dir.write('toolgate.yaml', 'upstreams: {}\n');
    await gateway.reload();
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    dir?.remove();
  });

  it('gives every line a level and an event from the one list', () => {
    const events = new Set<string>(LOG_EVENTS);
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) {
      expect(['info', 'warn', 'error']).toContain(line.level);
      expect(events.has(line.event as string)).toBe(true);
      expect(line.event).toBe(line.msg);
    }
    expect(lines.map((line) => line.event)).toEqual(
      expect.arrayContaining(['call', 'http.refused', 'reload.refused', 'upstream.stderr']),
    );
  });

  it("logs the upstream's stderr at warn with its name, redacted and cut", () => {
    const stderr = lines.filter((line) => line.event === 'upstream.stderr');
    expect(stderr.every((line) => line.level === 'warn' && line.upstream === 'shop')).toBe(true);
    const text = stderr.map((line) => String(line.line));
    expect(text).toContain('starting with API_KEY [redacted]');
    expect(text.some((line) => line.includes('Authorization: Bearer [redacted]'))).toBe(true);
    expect(text.some((line) => line.includes('password=[redacted]'))).toBe(true);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain('abcdefghijklmnopqrstu');
    expect(all).not.toContain('hunter2');
    expect(Math.max(...text.map((line) => line.length))).toBeLessThanOrEqual(501);
  });
});

describe('followStderr', () => {
  it('holds a chatty server to a bounded rate and counts what it dropped', () => {
    const stream = new PassThrough();
    const logged: LogFields[] = [];
    let clock = 0;
    followStderr(
      'noisy',
      stream,
      [],
      (fields) => logged.push(fields),
      () => clock,
    );
    stream.write(Array.from({ length: 80 }, (_, i) => `line ${i}`).join('\n') + '\n');
    expect(logged.filter((line) => line.msg === 'upstream.stderr')).toHaveLength(50);
    clock = 10_000;
    stream.write('later\n');
    expect(logged.at(-2)).toEqual({
      msg: 'upstream.stderr-dropped',
      level: 'warn',
      upstream: 'noisy',
      lines: 30,
    });
    expect(logged.at(-1)).toEqual({
      msg: 'upstream.stderr',
      level: 'warn',
      upstream: 'noisy',
      line: 'later',
    });
  });

  it('redacts handed values and common credential shapes', () => {
    expect(redactStderr('key is s3cr3t-value!', ['s3cr3t-value!'])).toBe('key is [redacted]');
    expect(redactStderr('GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz', [])).toBe('GITHUB_TOKEN: [redacted]');
    expect(redactStderr('used sk-live-abcdefghijklmnop to call', [])).toBe('used [redacted] to call');
    expect(redactStderr('listening on port 3000', [])).toBe('listening on port 3000');
  });
});
