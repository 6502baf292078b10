import fc from 'fast-check';
import type { PermissionChecker } from '@toolgate/core';
import { play, toolkit } from './guard-toolkit';
import { CRM_SECRET, IBAN, PAGES, type Step } from './guard-vectors';

// Pieces the generated arguments are built from: attacks, their benign look-alikes, and noise.
const PIECES = [
  'http://169.254.169.254/',
  'http://0x7f000001/',
  'https://www.example.org/',
  'https://rebind.attacker.example/',
  'https://en.wikipedia.org/wiki/X',
  '/srv/data/a.txt',
  '/srv/data/../../etc/passwd',
  '%2e%2e/',
  '; rm -rf /',
  '$(id)',
  '\n',
  'status',
  IBAN,
  CRM_SECRET,
  btoa(CRM_SECRET),
  `AKIA${'QWERTYUPASDFGHJK'}`,
  '3f786850e387550fdab836ed7e6dc881de23001b',
];

const text = fc.oneof(
  fc.constantFrom(...PIECES),
  fc.string({ maxLength: 12 }),
  fc
    .tuple(fc.constantFrom(...PIECES), fc.string({ maxLength: 4 }), fc.constantFrom(...PIECES))
    .map((parts) => parts.join('')),
);

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ tool: fc.constant('fetch_url'), args: fc.record({ url: text }) }),
  fc.record({ tool: fc.constant('http_post'), args: fc.record({ url: text, body: text }) }),
  fc.record({ tool: fc.constant('send_message'), args: fc.record({ to: text, text }) }),
  fc.record({ tool: fc.constant('read_file'), args: fc.record({ path: text }) }),
  fc.record({ tool: fc.constant('run_command'), args: fc.record({ command: text }) }),
  fc.record({ tool: fc.constant('call_crm'), args: fc.record({ query: text }) }),
  fc.record({
    tool: fc.constant('web_fetch'),
    args: fc.record({ page: fc.constantFrom(...Object.keys(PAGES)) }),
  }),
  fc.record({ tool: fc.constant('bank_transfer'), args: fc.record({ to: text, amount: fc.integer() }) }),
  fc.record({
    tool: fc.constant('get_config'),
    args: fc.record({ which: fc.constantFrom('leaky', 'plain') }),
  }),
);

/** A checker that denies the calls whose tool name is in `denied`. */
const checker = (denied: ReadonlySet<string>): PermissionChecker => ({
  check: (request) =>
    denied.has(request.target) ? { allow: false, reason: 'not for this agent' } : { allow: true },
});

describe('no guard ever turns a refused call into a run', () => {
  it('whatever the calls, a call refused without guards is refused with them, and never runs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 4 }),
        fc.subarray(['fetch_url', 'send_message', 'run_command', 'bank_transfer', 'web_fetch']),
        fc.constantFrom<'acme' | 'globex'>('acme', 'globex'),
        async (steps, denied, tenant) => {
          const permissions = checker(new Set(denied));
          const bare = toolkit('none', permissions);
          const guarded = toolkit('configured', permissions);
          for (const s of steps.map((one) => ({ ...one, tenant }))) {
            const runsBefore = guarded.runs.get(s.tool) ?? 0;
            const without = await play(bare, [s]);
            const withGuards = await play(guarded, [s]);
            const ran = (guarded.runs.get(s.tool) ?? 0) - runsBefore;
            if (without.kind !== 'result') {
              expect(withGuards.kind).not.toBe('result');
              expect(ran).toBe(0);
            }
            // A refusal says whether the tool ran, and says it truly.
            if (withGuards.kind === 'refused') expect(withGuards.ran).toBe(ran === 1);
            // Only the result screen and the secret guard act after the tool ran; the others refuse before.
            if (withGuards.kind === 'refused' && ran === 1)
              expect(['result-screen', 'secret-guard']).toContain(withGuards.gate);
          }
        },
      ),
      { numRuns: 250, seed: Number(process.env['TOOLGATE_SEED'] ?? 26) },
    );
  });
});
