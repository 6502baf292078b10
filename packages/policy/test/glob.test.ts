// One tool-name glob matcher for policy rules and the gateway's configuration.

import { matchesToolGlob, toolGlob } from '@toolgate/policy';

describe('tool-name globs', () => {
  it("reads '*' as any run and '?' as one character, anchored at both ends", () => {
    expect(matchesToolGlob('billing_refund', 'billing_*')).toBe(true);
    expect(matchesToolGlob('my_billing_refund', 'billing_*')).toBe(false);
    expect(matchesToolGlob('fs_read', 'fs_rea?')).toBe(true);
    expect(matchesToolGlob('fs_reads', 'fs_rea?')).toBe(false);
  });

  it('takes every other character literally, regex syntax included', () => {
    expect(matchesToolGlob('a.b', 'a.b')).toBe(true);
    expect(matchesToolGlob('axb', 'a.b')).toBe(false);
    expect(matchesToolGlob('a-b', 'a-b')).toBe(true);
    expect(matchesToolGlob('(x)', '(x)')).toBe(true);
    expect(matchesToolGlob('x', '(x)')).toBe(false);
    expect(matchesToolGlob('ab', 'a|b')).toBe(false);
  });

  it('matches a name against a list when any glob does, and never against an empty list', () => {
    expect(matchesToolGlob('search', ['read_*', 'search'])).toBe(true);
    expect(matchesToolGlob('write', ['read_*', 'search'])).toBe(false);
    expect(matchesToolGlob('', [])).toBe(false);
    expect(toolGlob(['read_*', 'search']).source).toBe('^(?:read_.*|search)$');
  });
});
