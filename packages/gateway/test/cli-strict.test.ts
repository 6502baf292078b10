// Issue 32, finding 8: the command line refuses what it does not understand. An unknown command,
// subcommand or flag, or a stray word, exits 2 with a did-you-mean, before any configuration is read
// (`check --conifg other.yaml` used to validate ./toolgate.yaml; `audit verify --bogus` said ok).

import { cliIn, tempDir, type TempDir } from './helpers';

describe('toolgate command line, strictly', () => {
  let dir: TempDir;
  let run: ReturnType<typeof cliIn>;
  beforeAll(() => {
    dir = tempDir();
    // A configuration that would pass `check` on its own, so only the command line can fail.
    dir.write('toolgate.yaml', 'upstreams: {}\ntenants: {}\n');
    run = cliIn(dir, {});
  });
  afterAll(() => dir.remove());

  it.each([
    [
      ['check', '--conifg', 'other.yaml'],
      "unknown flag '--conifg' for this command; did you mean '--config'?",
    ],
    [['audit', 'verify', '--bogus'], "unknown flag '--bogus' for this command"],
    [['gateway', '--prot', '0'], "did you mean '--port'?"],
    [['chek'], "unknown command 'chek'; did you mean 'check'?"],
    [['pins', 'lsit'], "unknown subcommand 'pins lsit'; did you mean 'list'?"],
    [['audit', 'verfy'], "did you mean 'verify'?"],
    [['check', 'extra.yaml'], "'check' takes no arguments, and was given 1"],
    [['pins', 'list', 'x'], "'pins list' takes 0 argument(s), and was given 1"],
    [['check', '--config'], '--config needs a value'],
    [['gateway', '--stdio=yes'], '--stdio takes no value'],
    [['check', '--port', '1'], "unknown flag '--port' for this command"],
  ])('exits 2 for %j: %s', async (argv, message) => {
    const answer = await run(argv);
    expect(answer.code).toBe(2);
    expect(answer.err).toMatch(/^toolgate: /);
    expect(answer.err).toContain(message);
    expect(answer.out).toBe('');
  });

  it('never echoes a flag value it refuses', async () => {
    const answer = await run(['check', '--token=hunter2-very-secret']);
    expect(answer.code).toBe(2);
    expect(answer.err).not.toContain('hunter2');
  });

  it('still reads what it knows: flags before the command, = values and short names', async () => {
    expect((await run(['--config', 'toolgate.yaml', 'check'])).code).not.toBe(2);
    expect((await run(['check', '--config=toolgate.yaml'])).code).not.toBe(2);
    expect((await run(['check', '-c', 'toolgate.yaml'])).code).not.toBe(2);
    expect((await run(['--help'])).code).toBe(0);
  });
});
