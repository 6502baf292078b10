// Issue 39's configuration keys (`upstreams.<name>.auth`, `credentials.<name>.perPrincipal`): each
// mistake is an error at its line and column with the fix, and names no secret.

import { randomBytes } from 'node:crypto';
import { configIssues } from './helpers';

const KEY = randomBytes(32).toString('base64');
const SECRET = 'client-secret-zq0123456789abcdef';

const issuesOf = (text: string) => configIssues(text, { KEY, SECRET, SHORT: 'too-short-key' });

const jwt = 'auth: { jwt: { issuer: https://id.example, audience: toolgate, jwks: ./jwks.json } }\n';
const tenants = 'tenants: { acme: { upstreams: [crm] } }\n';
const exchange = (extra: string) =>
  `tokenExchange: { tokenUrl: https://id.example/token, ${extra} client: { id: toolgate, secret: "\${env:SECRET}" } }`;

describe('upstream identity configuration', () => {
  it('accepts token exchange, client credentials and a per-principal credential', () => {
    expect(
      issuesOf(
        `${jwt}upstreams:\n  crm:\n    url: https://crm.example/mcp\n    headers: { X-Key: "\${credential:crm}" }\n    auth:\n      ${exchange('audience: https://crm.example,')}\n      clientCredentials: { client: { id: toolgate, secret: "\${env:SECRET}" } }\ncredentials: { crm: { perPrincipal: { key: "\${env:KEY}", store: "sqlite:./c.db" } } }\n${tenants}`,
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'both audience and resource',
      `${jwt}upstreams:\n  crm:\n    url: https://crm.example/mcp\n    auth: { ${exchange('audience: a, resource: https://crm.example,')} }\n${tenants}`,
      "needs exactly one of 'audience' or 'resource'",
    ],
    [
      'neither audience nor resource',
      `${jwt}upstreams:\n  crm:\n    url: https://crm.example/mcp\n    auth: { ${exchange('')} }\n${tenants}`,
      "needs exactly one of 'audience' or 'resource'",
    ],
    [
      'token exchange without auth.jwt',
      `upstreams:\n  crm:\n    url: https://crm.example/mcp\n    auth: { ${exchange('audience: a,')} }\n${tenants}`,
      'auth.jwt is not configured',
    ],
    [
      'auth on a stdio server',
      `${jwt}upstreams:\n  crm:\n    command: [node, s.js]\n    auth: { ${exchange('audience: a,')} }\n${tenants}`,
      "applies only to an HTTP server ('url')",
    ],
    [
      'auth over plain http to another host',
      `${jwt}upstreams:\n  crm:\n    url: http://crm.example/mcp\n    auth: { ${exchange('audience: a,')} }\n${tenants}`,
      'in the clear',
    ],
    [
      'a client with both a secret and a key',
      `${jwt}upstreams:\n  crm:\n    url: https://crm.example/mcp\n    auth: { tokenExchange: { tokenUrl: https://id.example/token, audience: a, client: { id: t, secret: s, privateKeyJwt: k } } }\n${tenants}`,
      "needs exactly one of 'secret' or 'privateKeyJwt'",
    ],
    [
      'a per-principal key that is not 32 bytes',
      `upstreams: { crm: { url: https://crm.example/mcp, headers: { X: "\${credential:crm}" } } }\ncredentials: { crm: { perPrincipal: { key: "\${env:SHORT}" } } }\n${tenants}`,
      'is not a 32-byte key',
    ],
    [
      'a per-principal credential in a stdio environment',
      `upstreams: { crm: { command: [node, s.js], env: { X: "\${credential:crm}" } } }\ncredentials: { crm: { perPrincipal: { key: "\${env:KEY}" } } }\n${tenants}`,
      'shared by every caller',
    ],
    [
      'a per-principal credential beside a shared one in one header',
      `upstreams: { crm: { url: https://crm.example/mcp, headers: { X: "\${credential:crm}:\${credential:svc}" } } }\ncredentials: { crm: { perPrincipal: { key: "\${env:KEY}" } }, svc: { env: SVC } }\n${tenants}`,
      'mixes a per-principal credential with a shared one',
    ],
    [
      'per-principal credentials in Redis',
      `upstreams: { crm: { url: https://crm.example/mcp, headers: { X: "\${credential:crm}" } } }\ncredentials: { crm: { perPrincipal: { key: "\${env:KEY}", store: "redis://cache:6379" } } }\n${tenants}`,
      "keeps per-principal credentials in memory:, sqlite:PATH or a 'postgres://' URL only",
    ],
    [
      'a credential with both env and perPrincipal',
      `upstreams: { crm: { url: https://crm.example/mcp } }\ncredentials: { crm: { env: X, perPrincipal: { key: "\${env:KEY}" } } }\n${tenants}`,
      "needs exactly one of 'env', 'file' or 'perPrincipal'",
    ],
  ])('refuses %s, at its line with a fix, naming no secret', (_case, text, message) => {
    const issues = issuesOf(text);
    const issue = issues.find((found) => found.message.includes(message));
    expect(issue).toBeDefined();
    expect(issue!.line).toBeGreaterThan(0);
    expect(issue!.fix).toBeDefined();
    const printed = JSON.stringify(issues);
    for (const secret of [KEY, SECRET, 'too-short-key']) expect(printed).not.toContain(secret);
  });
});
