import { AuditConfigError, auditLog, inMemoryAuditStore } from '@toolgate/audit';
import { DIGEST_KEY, PRIVATE_PEM } from '../../../test-support/audit-fixtures';

const base = { store: inMemoryAuditStore(), signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY };

function thrownBy(build: () => unknown): AuditConfigError {
  try {
    build();
  } catch (error) {
    if (error instanceof AuditConfigError) return error;
    throw error;
  }
  throw new Error('expected an AuditConfigError');
}

describe('audit errors', () => {
  it('write the message from the facts they carry', () => {
    const error = new AuditConfigError({ subject: 'audit head', problem: 'expected SEQ:HASH' });
    expect(error.message).toBe('audit head: expected SEQ:HASH.');
    expect(error.subject).toBe('audit head');
    expect(error.problem).toBe('expected SEQ:HASH');
    expect(error.option).toBeUndefined();
  });

  it('name the option at fault as a field, for a key and for a setting', () => {
    const key = thrownBy(() => auditLog({ ...base, signingKey: 'not a key' }));
    expect(key).toMatchObject({ subject: 'auditLog', option: 'signingKey' });
    expect(key.problem).toMatch(/^'signingKey': expected a PEM or JWK Ed25519 key/);
    const digest = thrownBy(() => auditLog({ ...base, digestKey: 'short' }));
    expect(digest).toMatchObject({ subject: 'auditLog', option: 'digestKey' });
    const deadline = thrownBy(() => auditLog({ ...base, deadlineMs: 0 }));
    expect(deadline).toMatchObject({
      subject: 'auditLog',
      option: 'deadlineMs',
      problem: "'deadlineMs' must be a positive integer of milliseconds",
    });
  });

  it('set no option when a problem names none, even if its text starts with a quote', () => {
    const error = new AuditConfigError({ subject: 'auditLog', problem: "'store' looks quoted" });
    expect(error.option).toBeUndefined();
  });
});
