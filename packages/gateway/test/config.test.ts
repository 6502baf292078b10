// Loading a configuration: every problem reported at once, each at its file, line and column with
// the fix, and never with a value that came from the environment or a file.

import { ConfigError, parseConfig, parseDuration, parseSize, type ConfigIssue } from '@toolgate/gateway';
import { CHECKIN_KEY, tempDir } from './helpers';

const FILE = '/etc/toolgate/toolgate.yaml';

function issuesOf(text: string, env: Record<string, string> = {}): ConfigIssue[] {
  try {
    parseConfig(text, { file: FILE, env });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const where = (issue: ConfigIssue) => `${issue.line}:${issue.column} ${issue.message}`;

const minimal = `upstreams:
  fs: { command: [node, server.js] }
tenants:
  acme: { upstreams: [fs] }
`;

describe('loadConfig / parseConfig', () => {
  it('accepts the minimal configuration and keeps durations and sizes as written', () => {
    const loaded = parseConfig(
      `${minimal}checkIns: { key: "${CHECKIN_KEY}", ttl: 15m, hold: 30s }\ndefaults: { resultCeiling: { maxChars: 8000, maxBytes: 5mb } }\n`,
      { file: FILE },
    );
    expect(loaded.config.checkIns).toEqual({ key: CHECKIN_KEY, ttl: '15m', hold: '30s' });
    expect(loaded.file).toBe(FILE);
    expect(loaded.baseDir).toBe('/etc/toolgate');
  });

  it('names an unknown key at its own position, with the closest known key', () => {
    const [issue, ...rest] = issuesOf(
      `upstreams:\n  fs:\n    command: [node]\n    prefx: fs_\ntenants: { acme: { upstreams: [fs] } }\n`,
    );
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({
      file: FILE,
      line: 4,
      column: 5,
      path: ['upstreams', 'fs', 'prefx'],
      message: "unknown key 'prefx'",
    });
    expect(issue!.fix).toMatch(/^did you mean 'prefix'\? Known keys here: command, /);
  });

  it('reports every problem of the file at once, in file order', () => {
    const issues = issuesOf(`listen: { port: "80" }
checkIns: { key: short, ttl: 15x }
upstreams:
  fs: { command: [node], url: "http://127.0.0.1:1/mcp" }
tenants:
  acme: { upstreams: [fss] }
  globex: { upstreams: [fs], policy: [{ name: a, effect: maybe }] }
`);
    expect(issues.map(where)).toEqual([
      '1:17 must be a whole number',
      '2:18 the check-in key is shorter than 32 bytes',
      '2:30 is not a duration',
      "4:7 needs exactly one of 'command' (a stdio server) or 'url' (a Streamable HTTP server)",
      "6:23 names the upstream 'fss', which is not configured",
      "7:58 must be one of: 'allow', 'deny', 'ask'",
    ]);
    expect(issues.find((i) => i.message.startsWith('names the upstream'))?.fix).toBe("did you mean 'fs'?");
  });

  it('places errors in a JSON file by line and column too', () => {
    const json = `{
  "upstreams": { "fs": { "command": ["node"] } },
  "tenants": { "acme": { "upstreams": ["fs"], "limits": [{ "name": "l", "per": "tenant", "window": "1 minute", "calls": 5 }] } }
}`;
    expect(issuesOf(json).map(where)).toEqual(['3:100 is not a duration']);
  });

  it('refuses a name that points nowhere: a token for an unknown tenant, an unknown credential, a repeated token', () => {
    const issues = issuesOf(
      `upstreams:
  billing: { url: "http://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer \${credential:billing}" } }
tenants: { acme: { upstreams: [billing] } }
auth:
  tokens:
    - { token: "\${env:A}", identity: { tenant: acmee, principal: bot } }
    - { token: "\${env:B}", identity: { tenant: acme, principal: ana } }
`,
      { A: 'same-secret-value-0123456789abcdef', B: 'same-secret-value-0123456789abcdef' },
    );
    expect(issues.map(where)).toEqual([
      "2:74 uses the credential 'billing', which is not configured",
      "6:48 names the tenant 'acmee', which is not configured",
      '7:16 repeats the token of auth.tokens[0]',
    ]);
    expect(JSON.stringify(issues)).not.toContain('same-secret-value');
  });

  it('interpolates ${env:…} and ${file:…}, and never prints what they hold', () => {
    const dir = tempDir();
    try {
      dir.write('key.txt', `${CHECKIN_KEY}\n`);
      const loaded = parseConfig(
        `${minimal}checkIns: { key: "\${file:key.txt}" }\nauth: { tokens: [{ token: "\${env:TOKEN}", identity: { tenant: acme, principal: bot } }] }\n`,
        {
          file: `${dir.path}/toolgate.yaml`,
          env: { TOKEN: 'env-secret-token-value-0123456789' },
        },
      );
      expect(loaded.config.checkIns?.key).toBe(CHECKIN_KEY);
      expect(loaded.config.auth?.tokens?.[0]?.token).toBe('env-secret-token-value-0123456789');
      expect(loaded.secrets).toEqual(
        expect.arrayContaining([CHECKIN_KEY, 'env-secret-token-value-0123456789']),
      );

      // A secret that fails a check is still never quoted.
      const issues = issuesOf(`${minimal}checkIns: { key: "\${env:SHORT}" }\n`, { SHORT: 'tiny-secret' });
      expect(issues.map(where)).toEqual(['5:18 the check-in key is shorter than 32 bytes']);
      expect(JSON.stringify(issues)).not.toContain('tiny-secret');
    } finally {
      dir.remove();
    }
  });

  it('refuses an unset variable, an unreadable file and any other interpolation, naming each', () => {
    const issues = issuesOf(
      `${minimal}checkIns: { key: "\${env:NOPE}" }\nlisten: { host: "\${file:missing.txt}" }\ntelemetry: { serviceName: "\${shell:whoami}" }\n`,
    );
    expect(issues.map(where)).toEqual([
      "5:18 the environment variable 'NOPE' is not set",
      "6:17 the file 'missing.txt' cannot be read (it does not exist)",
      "7:27 unknown interpolation '${shell:…}'",
    ]);
  });

  it('reads ${credential:…} only in upstream headers and env', () => {
    const issues = issuesOf(
      `${minimal}credentials: { c: { env: C } }\nlisten: { host: "\${credential:c}" }\n`,
    );
    expect(issues.map(where)).toEqual(["6:17 ${credential:…} is only read in an upstream's headers or env"]);
  });

  it('refuses YAML it cannot parse, and duplicate keys, at their position', () => {
    expect(issuesOf('upstreams: [\n').map((i) => i.line)).toEqual([2]);
    expect(issuesOf(`${minimal}tenants: {}\n`).map(where)).toEqual([
      '5:1 not valid YAML or JSON (duplicate key)',
    ]);
  });

  it('requires exactly one of calls or budget in a limit, and a cost with a budget', () => {
    const issues = issuesOf(
      `${minimal}limits:\n  - { name: a, per: tenant, window: 1m }\n  - { name: b, per: [tenant, tool], window: 1h, budget: 100 }\n  - { name: a, per: principal, window: 1m, calls: 1 }\n`,
    );
    expect(issues.map(where)).toEqual([
      "6:5 needs exactly one of 'calls' (a rate) or 'budget'",
      "7:5 a budget needs 'cost': units per call by tool",
      "8:13 repeats the limit name 'a'",
    ]);
  });
});

describe('durations and sizes', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1.5s', 1500],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['15', '15x', '-1s', '0s', 's', ''])('%j is refused with what is accepted', (text) =>
    expect(parseDuration(text)).toMatch(/duration such as '500ms', '30s'/),
  );

  it.each([
    ['512b', 512],
    ['64kb', 65_536],
    ['5mb', 5 * 1024 * 1024],
    ['1GB', 1024 ** 3],
    [4096, 4096],
  ])('%s is %d bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['5 mib', '0b', 'lots', -3])('%j is refused', (text) =>
    expect(parseSize(text)).toMatch(/size such as/),
  );
});
