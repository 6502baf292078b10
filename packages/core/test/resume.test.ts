import {
  checkInApproved,
  createChain,
  createDispatcher,
  createSigner,
  inMemoryCheckIns,
  type CheckInDecision,
  type CheckInRequest,
  type DispatchOutcome,
  type Middleware,
  type PausedOutcome,
} from '@toolgate/core';
import { countingTool, KEY, manualClock } from './fixtures';

const approval: Middleware = {
  name: 'approval',
  async run(ctx, next) {
    await ctx.ask('Go ahead?');
    await next();
  },
};

function setup() {
  const clock = manualClock();
  const tool = countingTool();
  const chain = createChain([approval], {
    checkIns: { key: KEY, store: inMemoryCheckIns({ now: clock.now }) },
  });
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
  return { tool, dispatcher };
}

async function pausedRequest(dispatcher: ReturnType<typeof setup>['dispatcher']): Promise<CheckInRequest> {
  const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'hi' } });
  return (outcome as PausedOutcome).checkIn;
}

function refused(outcome: DispatchOutcome) {
  if (outcome.kind !== 'refused')
    throw new Error(`expected a refusal, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

describe('resume verifies the request before running anything', () => {
  it.each([
    ['null', () => null],
    ['a string', () => 'chk_123'],
    ['missing its signature', (r: CheckInRequest) => ({ ...r, signature: undefined })],
    ['with args that are not an object', (r: CheckInRequest) => ({ ...r, args: 'text=hi' })],
    ['with a review that is an array', (r: CheckInRequest) => ({ ...r, review: [] })],
    ['with an unreadable expiry', (r: CheckInRequest) => ({ ...r, expiresAt: 'soon' })],
    ['with receipts that are not a list of objects', (r: CheckInRequest) => ({ ...r, receipts: ['ok'] })],
    ['with a numeric toolSource', (r: CheckInRequest) => ({ ...r, toolSource: 7 })],
  ])('refuses a request that is %s as malformed, without throwing', async (_label, reshape) => {
    const { dispatcher, tool } = setup();
    const request = await pausedRequest(dispatcher);
    const outcome = refused(
      await dispatcher.resume(reshape(request) as never, checkInApproved({ by: 'ana' })),
    );
    expect(outcome.gate).toBe('check-in');
    expect(outcome.code).toBe('CHECKIN_MALFORMED');
    expect(outcome.content).toContain('this approval request is malformed');
    expect(tool.calls).toHaveLength(0);
  });

  it.each([
    ['null', null],
    ['a bare boolean', true],
    ['an approval without who', { approved: true }],
    ['a decision whose approved flag is a string', { approved: 'yes', by: 'ana' }],
    ['an approval by a blank name', { approved: true, by: ' ' }],
    ['a decline without a reason', { approved: false, by: 'ana' }],
  ])('refuses a decision that is %s', async (_label, decision) => {
    const { dispatcher, tool } = setup();
    const request = await pausedRequest(dispatcher);
    const outcome = refused(await dispatcher.resume(request, decision as unknown as CheckInDecision));
    expect(outcome.code).toBe('CHECKIN_BAD_DECISION');
    expect(tool.calls).toHaveLength(0);
  });

  it('refuses under a chain that has no pause service to verify with', async () => {
    const { dispatcher: issuer } = setup();
    const request = await pausedRequest(issuer);
    const tool = countingTool();
    const plain = createDispatcher({ tools: [tool], chain: createChain([approval]) });
    const outcome = refused(await plain.resume(request, checkInApproved({ by: 'ana' })));
    expect(outcome.code).toBe('CHECKIN_NO_SERVICE');
    expect(outcome.content).toBe(
      `[check-in refused: 'echo' did not run: this approval cannot be checked because the policy has no check-in key. Ask for a new approval.]`,
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('refuses a request for a tool this dispatcher does not serve', async () => {
    const { dispatcher: issuer } = setup();
    const request = await pausedRequest(issuer);
    const elsewhere = createDispatcher({
      tools: [countingTool('other')],
      chain: createChain([approval], { checkIns: { key: KEY } }),
    });
    const outcome = refused(await elsewhere.resume(request, checkInApproved({ by: 'ana' })));
    expect(outcome.code).toBe('UNKNOWN_TOOL');
  });

  it('checks the signature of every receipt a request carries', async () => {
    const { dispatcher, tool } = setup();
    const request = await pausedRequest(dispatcher);
    const { signature: _signature, ...unsigned } = request;
    const forgedReceipt = {
      requestId: 'chk_earlier',
      asker: 'approval',
      by: 'mallory',
      approvedAt: request.createdAt,
      argsDigest: request.argsDigest,
      chainIdRaised: request.chainId,
      chainIdRun: request.chainId,
      signature: 'f'.repeat(64),
    };
    const withReceipt = { ...unsigned, receipts: [forgedReceipt] };
    const resigned = { ...withReceipt, signature: await createSigner(KEY).sign(withReceipt) };
    const outcome = refused(await dispatcher.resume(resigned, checkInApproved({ by: 'ana' })));
    expect(outcome.code).toBe('CHECKIN_SIGNATURE');
    expect(tool.calls).toHaveLength(0);
  });
});
