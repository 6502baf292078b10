// The `toolgate` command: parse argv, load the configuration, call the library, print. Exit codes:
// 0 done, 1 the configuration or a check failed, 2 the command line was wrong or the feature is missing.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../config/errors';
import { loadConfig } from '../config/load';
import { auditCommand } from './audit';
import { checkCommand } from './check';
import { credentialsCommand } from './credentials';
import { gatewayCommand } from './gateway';
import { policyTestCommand } from './policy-test';
import { NotSupportedError, parseArgs, UsageError, type CommandIo } from './io';
import { pinsCommand } from './pins';

export const USAGE = `usage: toolgate <command> [--config toolgate.yaml]

  gateway [--port N] [--host H] [--stdio]   serve until SIGINT/SIGTERM; SIGHUP reloads
  check                                     validate, connect every upstream, print each tenant's tools
  policy test CASES.yaml                    run policy cases against the configured rules
  pins list [--changed] [--upstream U]      show pinned tool definitions and which changed
  pins accept TOOL [--by NAME]              show a changed definition's diff and accept it
  audit verify [--public-key PEM]           check the audit log's hash chain and signatures
    [--checkpoint FILE|URL] [--head SEQ:HASH]  and that it reaches and agrees with a head kept apart
  audit export [--out FILE]                 print the audit log as JSON lines
  credentials list NAME [--tenant T]        who has stored a per-principal credential (no values)
  credentials set NAME --tenant T --principal P (--from-env VAR | --from-file PATH)
                                            store a principal's credential, encrypted
  credentials delete NAME --tenant T --principal P

--config defaults to ./toolgate.yaml (or ./toolgate.json).`;

export async function runCli(argv: readonly string[], io: CommandIo): Promise<number> {
  try {
    const args = parseArgs(argv);
    const [command, ...rest] = args.positional;
    if (command === undefined || args.flags.has('help') || command === 'help') {
      io.out(USAGE);
      return command === undefined && !args.flags.has('help') ? 2 : 0;
    }
    const configFile = () => {
      const given = args.flags.get('config');
      if (typeof given === 'string') return resolve(io.cwd, given);
      for (const candidate of ['toolgate.yaml', 'toolgate.yml', 'toolgate.json']) {
        if (existsSync(resolve(io.cwd, candidate))) return resolve(io.cwd, candidate);
      }
      throw new UsageError('no configuration: pass --config toolgate.yaml');
    };
    switch (command) {
      case 'gateway':
        return await gatewayCommand(configFile(), args, io);
      case 'check':
        return await checkCommand(loadConfig(configFile(), { env: io.env }), io);
      case 'policy':
        if (rest[0] !== 'test' || rest[1] === undefined)
          throw new UsageError('usage: toolgate policy test CASES.yaml --config F');
        return await policyTestCommand(
          resolve(io.cwd, rest[1]),
          loadConfig(configFile(), { env: io.env }),
          io,
        );
      case 'pins':
        if (rest[0] !== 'list' && !(rest[0] === 'accept' && rest[1] !== undefined))
          throw new UsageError('usage: toolgate pins list | toolgate pins accept TOOL --config F');
        return await pinsCommand(loadConfig(configFile(), { env: io.env }), rest[0], rest[1], args, io);
      case 'audit':
        if (rest[0] !== 'verify' && rest[0] !== 'export')
          throw new UsageError('usage: toolgate audit verify | export --config F');
        return await auditCommand(loadConfig(configFile(), { env: io.env }), rest[0], args, io);
      case 'credentials':
        if ((rest[0] !== 'list' && rest[0] !== 'set' && rest[0] !== 'delete') || rest[1] === undefined)
          throw new UsageError('usage: toolgate credentials list|set|delete NAME --config F');
        return await credentialsCommand(
          loadConfig(configFile(), { env: io.env }),
          rest[0],
          rest[1],
          args,
          io,
        );
      default:
        // parseArgs refused every other word already.
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(error.message);
      return 1;
    }
    if (error instanceof UsageError) {
      io.err(`toolgate: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof NotSupportedError) {
      io.err(`toolgate: not supported: ${error.message}.`);
      return 2;
    }
    io.err(`toolgate: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}
