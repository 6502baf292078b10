import { inspect } from 'node:util';
import { Credential, redact } from '@toolgate/core';

const SECRET = 'sk_live_51Habc';
const need = { kind: 'api_key', service: 'stripe' };

describe('Credential', () => {
  it('reveals its secret only through reveal()', () => {
    const credential = new Credential(need, {
      kind: 'api_key',
      value: SECRET,
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    expect(credential.reveal()).toBe(SECRET);
    expect(credential.kind).toBe('api_key');
    expect(credential.service).toBe('stripe');
    expect(credential.expiresAt).toBe('2030-01-01T00:00:00.000Z');
  });

  it('does not show the secret in JSON, String or util.inspect', () => {
    const credential = new Credential(need, { kind: 'api_key', value: SECRET });
    expect(JSON.stringify(credential)).toBe('{"kind":"api_key","service":"stripe","value":"[redacted]"}');
    expect(JSON.stringify({ nested: [credential] })).not.toContain(SECRET);
    expect(String(credential)).toBe('Credential(api_key for stripe)');
    expect(`${credential}`).not.toContain(SECRET);
    expect(inspect(credential, { showHidden: true, depth: 5 })).not.toContain(SECRET);
  });

  it('loses the secret when spread or structuredClone-d', () => {
    const credential = new Credential(need, { kind: 'basic', value: { user: 'svc', password: SECRET } });
    const spread = { ...credential } as Record<string, unknown>;
    const cloned = structuredClone(credential) as unknown as Record<string, unknown>;
    expect(JSON.stringify(spread)).not.toContain(SECRET);
    expect(JSON.stringify(cloned)).not.toContain(SECRET);
    expect(cloned).toEqual({ kind: 'basic', service: 'stripe' });
    expect('reveal' in cloned).toBe(false);
    expect(Object.values(credential)).not.toContain(SECRET);
  });

  it('has no expiresAt key when the provider gave no expiry', () => {
    const credential = new Credential(need, { kind: 'api_key', value: SECRET });
    expect('expiresAt' in credential).toBe(false);
    expect(Object.keys(credential)).toEqual(['kind', 'service']);
  });

  it('lists every non-empty secret string for redaction', () => {
    expect(new Credential(need, { kind: 'api_key', value: SECRET }).secrets()).toEqual([SECRET]);
    expect(
      new Credential(need, { kind: 'basic', value: { user: 'svc', password: SECRET, realm: '' } }).secrets(),
    ).toEqual(['svc', SECRET]);
  });

  it('keeps a record value frozen, so a tool cannot change the secret for later calls', () => {
    const value = { user: 'svc', password: SECRET };
    const credential = new Credential(need, { kind: 'basic', value });
    value.password = 'changed by the provider later';
    expect(credential.reveal()).toEqual({ user: 'svc', password: SECRET });
    expect(Object.isFrozen(credential.reveal())).toBe(true);
  });
});

describe('redact', () => {
  it('replaces every occurrence of every secret', () => {
    expect(redact(`a ${SECRET} b ${SECRET} c svc`, [SECRET, 'svc'])).toBe(
      'a [redacted] b [redacted] c [redacted]',
    );
  });

  it('ignores empty secrets and leaves clean text alone', () => {
    expect(redact('nothing to hide', ['', 'absent'])).toBe('nothing to hide');
  });
});

describe('redact with overlapping secrets', () => {
  it('leaves no part of a longer secret that contains a shorter one', () => {
    const credential = new Credential(need, {
      kind: 'basic',
      value: { user: 'admin', password: 'admin-Pa55word' },
    });
    const text = redact('login admin:admin-Pa55word refused', credential.secrets());
    expect(text).toBe('login [redacted]:[redacted] refused');
    expect(text).not.toContain('Pa55word');
  });
});
