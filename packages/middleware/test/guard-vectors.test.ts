import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { play, stopped, toolkit } from './guard-toolkit';
import { scoreOf, VECTORS, type Configuration } from './guard-vectors';

const CONFIGURATIONS: readonly Configuration[] = ['none', 'defaults', 'configured'];
const cases = VECTORS.flatMap((vector) =>
  CONFIGURATIONS.map((configuration) => [vector.id, configuration, vector] as const),
);

describe('the guards against 46 attack vectors, each with a benign control', () => {
  it.each(cases)('%s with %s guards: stopped as the table says', async (_id, configuration, vector) => {
    const kit = toolkit(configuration);
    const outcome = await play(kit, vector.steps);
    expect(stopped(kit, vector.steps.at(-1)!, outcome)).toBe(vector.stops[configuration]);
    // A stopped call never ran, unless it was a result withheld, redacted or flagged after running.
    if (vector.stops[configuration] && outcome.kind === 'refused' && outcome.gate !== 'result-screen')
      expect(kit.runs.get(vector.steps.at(-1)!.tool) ?? 0).toBe(0);
  });

  it.each(cases)(
    '%s with %s guards: the benign control passes untouched',
    async (_id, configuration, vector) => {
      const kit = toolkit(configuration);
      const outcome = await play(kit, vector.control);
      expect(outcome.kind).toBe('result');
      expect(stopped(kit, vector.control.at(-1)!, outcome)).toBe(false);
      expect(kit.runs.get(vector.control.at(-1)!.tool)).toBe(1);
    },
  );

  it('scores 2 of 46 without guards, 14 with their defaults and 44 configured, as docs/guards.md says', () => {
    expect(VECTORS).toHaveLength(46);
    expect([scoreOf('none'), scoreOf('defaults'), scoreOf('configured')]).toEqual([2, 14, 44]);
    const docs = readFileSync(resolve(__dirname, '../../../docs/guards.md'), 'utf8');
    expect(docs).toContain('without guards 2 of 46, with `guards: {}` 14 of 46, configured 44 of 46');
    for (const vector of VECTORS) expect(docs).toContain(`| \`${vector.id}\``);
  });
});
