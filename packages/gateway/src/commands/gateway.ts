// `toolgate gateway --config F`: serve until SIGINT/SIGTERM (draining in-flight calls) or until the
// wrapper it was started through exits (parent-watch.ts); SIGHUP reloads.

import { createGateway } from '../gateway';
import type { CommandIo, ParsedArgs } from './io';
import { UsageError } from './io';
import { watchParent } from './parent-watch';

export async function gatewayCommand(file: string, args: ParsedArgs, io: CommandIo): Promise<number> {
  const port = args.flags.get('port');
  if (port !== undefined && (port === true || !/^\d+$/.test(port) || Number(port) > 65535))
    throw new UsageError('--port needs a port number (0 takes a free port)');
  const host = args.flags.get('host');
  if (host === true) throw new UsageError('--host needs a host name or address');
  const stdio = args.flags.get('stdio') === true;
  const gateway = await createGateway(file, {
    ...(port !== undefined ? { port: Number(port) } : {}),
    ...(host !== undefined ? { host } : {}),
    stdio,
    env: io.env,
    log: io.err,
  });
  if (!stdio) io.out(`toolgate gateway listening on ${gateway.url}`);

  return new Promise<number>((done) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      // Everything this command put on the event loop comes off it, so the process ends by itself.
      parent.stop();
      process.off('SIGHUP', reload);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      if (stdio) {
        process.stdin.off('end', stop);
        process.stdin.pause();
      }
      void gateway.close().then(
        () => done(0),
        () => done(1),
      );
    };
    const reload = () => void gateway.reload();
    // No orphan keeps serving: a gateway whose wrapper is gone stops as if it had been sent SIGTERM.
    const parent = watchParent((why) => {
      io.err(
        JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'gateway.parent-exited', why }),
      );
      stop();
    });
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    process.on('SIGHUP', reload);
    // In stdio mode the client closing our stdin ends the session, and so the gateway.
    if (stdio) process.stdin.on('end', stop);
  });
}
