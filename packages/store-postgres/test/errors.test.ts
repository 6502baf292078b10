// Store errors without a server: what is retryable, and that no secret survives into a message.

import { isRetryable, storeError } from '../src/errors';

const URL_WITH_PASSWORD = 'postgres://app:s3cr%40t-pw@db.internal:5432/toolgate';
const SECRETS = [URL_WITH_PASSWORD, 's3cr@t-pw', 's3cr%40t-pw'];

const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('store errors', () => {
  it('removes the connection string and the password, plain or URL-encoded, from a message', () => {
    const cause = pgError(
      `could not connect with ${URL_WITH_PASSWORD}: password s3cr@t-pw / s3cr%40t-pw rejected`,
      '28P01',
    );
    const error = storeError('postgresCheckIns', 'prepare the database', cause, SECRETS);
    expect(error.message).not.toMatch(/s3cr|db\.internal:5432\/toolgate/);
    expect(error.message).toBe(
      'postgresCheckIns: could not prepare the database: the server refused the credentials. Check the user and password the store connects with (28P01: could not connect with [redacted]: password [redacted] / [redacted] rejected).',
    );
    expect(error.cause).toBeUndefined();
    expect(error.retryable).toBe(false);
  });

  it.each([
    ['a refused connection', pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['an administrator shutdown', pgError('terminating connection due to administrator command', '57P01')],
    ['a server starting up', pgError('the database system is starting up', '57P03')],
    ['too many connections', pgError('sorry, too many clients already', '53300')],
    ['a serialization failure', pgError('could not serialize access', '40001')],
    ['a connection ended mid-query', pgError('Connection terminated unexpectedly')],
    ['a pool that timed out', pgError('timeout exceeded when trying to connect')],
  ])('counts %s as retryable', (_, cause) => {
    expect(isRetryable(cause)).toBe(true);
    expect(storeError('postgresCheckIns', 'consume', cause, []).message).toMatch(
      /Retrying (later )?may help/,
    );
  });

  it.each([
    ['a duplicate key', pgError('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', pgError('syntax error at or near', '42601')],
    ['bad text', pgError('invalid byte sequence for encoding "UTF8": 0x00', '22021')],
    ['something that is not an Error', 'boom'],
  ])('counts %s as not retryable', (_, cause) => {
    expect(isRetryable(cause)).toBe(false);
  });
});
