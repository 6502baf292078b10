// What a resume value decides about one turn's review: humanInTheLoopMiddleware's `{ decisions }` in
// the order of the interrupt's actionRequests (or each naming its `checkInId`), a map of request id to
// decision, or, when the turn asks about exactly one request, a bare decision. The answer is client
// data: one that does not decide every request, or says something LangChain's review cannot
// (an edit that renames the tool, an unknown decision type), decides none.

import { checkInApproved, checkInDeclined, type CheckInDecision, type CheckInRequest } from '@toolgate/core';

export interface Decided {
  readonly request: CheckInRequest;
  readonly decision: CheckInDecision;
}

// An answer is client data; a huge one must not turn into thousands of decisions.
const MAX_DECISIONS = 64;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One decision about `request`: LangChain's approve / edit / reject, or a toolgate decision as given. */
function decisionOf(value: unknown, request: CheckInRequest, by: () => string): CheckInDecision | undefined {
  if (!isRecord(value)) return undefined;
  switch (value['type']) {
    case 'approve':
      return checkInApproved({ by: by() });
    case 'reject': {
      const message = value['message'];
      return checkInDeclined({
        by: by(),
        reason: typeof message === 'string' && message.trim() !== '' ? message : 'declined',
      });
    }
    case 'edit': {
      // Approve with changes: the edited args run through the whole chain again; the tool stays the one asked about.
      const action = value['editedAction'];
      if (!isRecord(action) || action['name'] !== request.toolName || !isRecord(action['args']))
        return undefined;
      return checkInApproved({ by: by(), args: action['args'] });
    }
    case undefined:
      // A toolgate decision (checkInApproved / checkInDeclined); resume refuses one that is not.
      return typeof value['approved'] === 'boolean' ? (value as unknown as CheckInDecision) : undefined;
    default:
      return undefined;
  }
}

function all(
  requests: readonly CheckInRequest[],
  valueFor: (request: CheckInRequest, index: number) => unknown,
  by: () => string,
): Decided[] | undefined {
  const decided: Decided[] = [];
  for (const [index, request] of requests.entries()) {
    const decision = decisionOf(valueFor(request, index), request, by);
    if (decision === undefined) return undefined;
    decided.push({ request, decision });
  }
  return decided;
}

/** Every request's decision, in the order of `requests`; undefined when the answer does not decide them all. */
export function decisionsFor(
  answer: unknown,
  requests: readonly CheckInRequest[],
  by: () => string,
): Decided[] | undefined {
  try {
    if (!isRecord(answer)) return undefined;
    const decisions = answer['decisions'];
    if (Array.isArray(decisions)) {
      if (decisions.length > MAX_DECISIONS) return undefined;
      const named =
        decisions.length > 0 && decisions.every((d) => isRecord(d) && typeof d['checkInId'] === 'string');
      if (named) {
        const byId = new Map<string, unknown>();
        for (const d of decisions as Record<string, unknown>[]) byId.set(d['checkInId'] as string, d);
        return all(requests, (request) => byId.get(request.id), by);
      }
      if (decisions.length !== requests.length) return undefined;
      // Positional: an entry that names a request must name the one at its place.
      return all(
        requests,
        (request, i) => {
          const entry: unknown = decisions[i];
          return isRecord(entry) && entry['checkInId'] !== undefined && entry['checkInId'] !== request.id
            ? undefined
            : entry;
        },
        by,
      );
    }
    if (requests.length === 1 && ('type' in answer || 'approved' in answer))
      return all(requests, () => answer, by);
    if (Object.keys(answer).length > MAX_DECISIONS) return undefined;
    return all(
      requests,
      (request) => (Object.hasOwn(answer, request.id) ? answer[request.id] : undefined),
      by,
    );
  } catch {
    // A getter or proxy that throws decides nothing.
    return undefined;
  }
}
