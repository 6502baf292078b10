// The configuration resolved once at load: durations in milliseconds, sizes in bytes and store URLs
// as typed locations wherever the schema marks a unit, the file's own form kept beside them, and a
// unit that cannot resolve placed in the file like any other problem.

import {
  ConfigError,
  parseConfig,
  type ConfigIssue,
  type ListenConfig,
  type ResolvedConfig,
} from '@toolgate/gateway';
import { resolvePart } from '../src/config/resolve';
import { CHECKIN_KEY } from './helpers';

const FILE = '/etc/toolgate/toolgate.yaml';

const minimal = `upstreams:
  fs: { command: [node, server.js], timeout: 2m, tools: { read: { resultCeiling: { maxChars: 10, maxBytes: 2kb } } } }
tenants:
  acme:
    upstreams: [fs]
    limits: [{ name: burst, per: principal, calls: 5, window: 1m }]
    guards: { egress: { deadline: 250ms } }
`;

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseConfig(text, { file: FILE, env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('resolving units at load', () => {
  it('turns every duration into milliseconds and every size into bytes, at any depth', () => {
    const loaded = parseConfig(
      `${minimal}listen: { drain: 1.5s, sessionIdle: 10m, maxBody: 5mb }\n` +
        `checkIns: { key: "${CHECKIN_KEY}", ttl: 15m, hold: 30s }\n` +
        `defaults: { resultCeiling: { maxBytes: 4096 } }\n` +
        `limits: [{ name: daily, per: [tenant, tool], calls: 100, window: 1d }]\n`,
      { file: FILE, env: {} },
    );
    const { resolved } = loaded;
    expect(resolved.listen).toEqual({ drain: 1500, sessionIdle: 600_000, maxBody: 5 * 1024 * 1024 });
    expect(resolved.checkIns).toEqual({ key: CHECKIN_KEY, ttl: 900_000, hold: 30_000 });
    expect(resolved.defaults?.resultCeiling?.maxBytes).toBe(4096);
    expect(resolved.limits?.[0]?.window).toBe(86_400_000);
    expect(resolved.upstreams['fs']?.timeout).toBe(120_000);
    expect(resolved.upstreams['fs']?.tools?.['read']?.resultCeiling?.maxBytes).toBe(2048);
    expect(resolved.tenants['acme']?.limits?.[0]?.window).toBe(60_000);
    expect(resolved.tenants['acme']?.guards?.egress).toEqual({ deadline: 250 });
  });

  it('keeps the file as written beside the resolved form', () => {
    const loaded = parseConfig(`${minimal}listen: { drain: 1.5s }\n`, { file: FILE, env: {} });
    expect(loaded.config.listen?.drain).toBe('1.5s');
    expect(loaded.resolved.listen?.drain).toBe(1500);
    expect(loaded.config.tenants['acme']?.guards).toEqual({ egress: { deadline: '250ms' } });
  });

  it('types store locations, a relative sqlite path made absolute against the file', () => {
    const locate = (stores: string) =>
      parseConfig(`${minimal}stores: ${stores}\n`, { file: FILE, env: {} }).resolved.stores;
    expect(locate('{ state: "sqlite:./state.db", limits: "memory:" }')).toEqual({
      state: { kind: 'sqlite', path: '/etc/toolgate/state.db' },
      limits: { kind: 'memory' },
    });
    expect(locate('{ state: "sqlite::memory:" }')).toEqual({ state: { kind: 'sqlite', path: ':memory:' } });
    expect(locate('{ state: "postgresql://db/toolgate", limits: "rediss://cache:6380" }')).toEqual({
      state: { kind: 'postgres', url: 'postgresql://db/toolgate' },
      limits: { kind: 'redis', url: 'rediss://cache:6380' },
    });
    expect(locate('{ state: "memory:" }')).toEqual({ state: { kind: 'memory' } });
  });

  it("types a per-principal credential's store like the other store locations", () => {
    const key = 'ab'.repeat(32);
    const credentials = (store: string) =>
      parseConfig(
        `${minimal}credentials: { crm: { perPrincipal: { key: "${key}", store: "${store}" } } }\n`,
        { file: FILE, env: {} },
      ).resolved.credentials?.['crm']?.perPrincipal?.store;
    expect(credentials('sqlite:./credentials.db')).toEqual({
      kind: 'sqlite',
      path: '/etc/toolgate/credentials.db',
    });
    expect(credentials('postgres://db/toolgate')).toEqual({
      kind: 'postgres',
      url: 'postgres://db/toolgate',
    });
    expect(credentials('memory:')).toEqual({ kind: 'memory' });
    const issues = issuesOf(
      `${minimal}credentials: { crm: { perPrincipal: { key: "${key}", store: "./credentials.db" } } }\n`,
    );
    expect(issues.map((issue) => issue.message)).toEqual([
      expect.stringContaining(
        "keeps per-principal credentials in memory:, sqlite:PATH or a 'postgres://' URL only",
      ),
    ]);
  });

  it('places a duration or size the schema lets through but that cannot resolve, with the fix', () => {
    const issues = issuesOf(`${minimal}listen: { drain: 0s, maxBody: 0kb }\n`);
    expect(issues.map((issue) => `${issue.line}:${issue.column} ${issue.message}`)).toEqual([
      '8:18 is not a duration',
      '8:31 is not a size',
    ]);
    expect(issues[0]?.fix).toMatch(/'30s'/);
  });

  it('places a webhook link lifetime that cannot resolve', () => {
    const issues = issuesOf(
      `${minimal}listen: { publicUrl: "https://gw.example.com" }\ncheckIns: { key: "${CHECKIN_KEY}" }\n` +
        `inbox: { webhook: { url: "https://hooks.example.com/x", linkTtl: 0m } }\n`,
    );
    expect(issues.map((issue) => `${issue.line} ${issue.message}`)).toEqual(['10 is not a duration']);
  });

  it('resolves one part as written for a factory called alone, and names a value that does not resolve', () => {
    expect(
      resolvePart(['auth'], { jwt: { issuer: 'i', audience: 'a', jwks: 'k.json', maxLifetime: '2h' } }, '/'),
    ).toEqual({
      jwt: { issuer: 'i', audience: 'a', jwks: 'k.json', maxLifetime: 7_200_000 },
    });
    expect(() => resolvePart(['listen'], { drain: '0s' }, '/')).toThrow(
      /^listen\.drain: is not a duration; write/,
    );
  });

  it('derives the resolved types from the schema: a resolved duration is a number, a written one a string', () => {
    const resolvedDrain: ListenConfig<ResolvedConfig>['drain'] = 30_000;
    const writtenDrain: ListenConfig['drain'] = '30s';
    // @ts-expect-error a written duration is text
    const wrong: ListenConfig['drain'] = 30_000;
    expect([resolvedDrain, writtenDrain, wrong]).toHaveLength(3);
  });
});
