// Checks a CheckInRequest handed back to `resume`: it may have travelled through a UI, a queue or a
// database, so its shape, signature and expiry are verified before the chain runs again.

import type { Signer } from './canonical';
import type { CheckInReceipt, CheckInRequest } from './check-in';

export type RequestProblem = 'malformed' | 'signature' | 'expired';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const STRING_FIELDS = [
  'id',
  'asker',
  'toolName',
  'toolCallId',
  'argsDigest',
  'chainId',
  'question',
  'createdAt',
  'expiresAt',
  'signature',
] as const;

function wellFormed(request: unknown): request is CheckInRequest {
  if (!isRecord(request)) return false;
  if (STRING_FIELDS.some((field) => typeof request[field] !== 'string')) return false;
  if (!isRecord(request['args']) || !isRecord(request['review'])) return false;
  if (request['toolSource'] !== undefined && typeof request['toolSource'] !== 'string') return false;
  if (request['identity'] !== undefined && !isRecord(request['identity'])) return false;
  if (
    request['receipts'] !== undefined &&
    (!Array.isArray(request['receipts']) || !request['receipts'].every(isRecord))
  )
    return false;
  return !Number.isNaN(Date.parse(request['expiresAt'] as string));
}

/** Undefined when the request is well formed, signed by `signer`'s key, and unexpired at `now`. */
export async function verifyCheckInRequest(
  request: unknown,
  signer: Signer,
  now: number,
): Promise<RequestProblem | undefined> {
  if (!wellFormed(request)) return 'malformed';
  const { signature, ...unsigned } = request;
  let valid: boolean;
  try {
    valid = await signer.verify(unsigned, signature);
    for (const receipt of request.receipts ?? []) valid = valid && (await verifyReceipt(receipt, signer));
  } catch {
    return 'malformed';
  }
  if (!valid) return 'signature';
  if (Date.parse(request.expiresAt) <= now) return 'expired';
  return undefined;
}

async function verifyReceipt(receipt: CheckInReceipt, signer: Signer): Promise<boolean> {
  const { signature, ...unsigned } = receipt;
  return signer.verify(unsigned, signature);
}
