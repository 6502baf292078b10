// The portable suite in-process on Node, so jest covers it on every run; `pnpm runtimes` runs the
// same bundle on Bun, Deno and workerd.
import { ajvValidator, evalFreeValidator } from '@toolgate/middleware';
import { runPortableSuite } from '../../../portability/suite';

describe('the portable suite on Node', () => {
  it.each([
    ['eval-free', evalFreeValidator()],
    ['ajv', ajvValidator()],
  ] as const)('passes every case with the %s validator', async (name, validator) => {
    const report = await runPortableSuite(name, validator);

    expect(report.cases.filter((c) => !c.ok)).toEqual([]);
    expect(report.cases.length).toBeGreaterThanOrEqual(12);
  });

  it('the eval-free validator gives every shared case the refusal ajv gives, word for word', async () => {
    const [evalFree, ajv] = await Promise.all([
      runPortableSuite('eval-free', evalFreeValidator()),
      runPortableSuite('ajv', ajvValidator()),
    ]);

    expect(evalFree.refusals).toEqual(ajv.refusals);
    expect(ajv.refusals.filter((r) => r.content.includes('validate-args refused')).length).toBeGreaterThan(
      20,
    );
  });
});
