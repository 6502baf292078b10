// `node --import tsx bench/gateway/wakeups.ts`: what one timer wake-up of an otherwise idle process
// costs in CPU, alone and with a journal-sized pwrite() in it: the cost a commit window's own timer
// adds at low call rates. Runs a 1 ms and a 50 ms timer loop for SECONDS_EACH seconds each (default
// 5) and solves for the per-wake cost and the process's background cost per second (two equations,
// two unknowns).
// Linux or macOS; nothing asserted.
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = Number(process.env['SECONDS_EACH'] ?? 5);
const file = join(tmpdir(), `toolgate-wakeups-${process.pid}`);
const fd = openSync(file, 'w+');
const frame = Buffer.alloc(2000, 97);

/** CPU µs per wake and wakes made, for a timer loop of `everyMs`, each wake writing a frame or not. */
function loop(everyMs: number, write: boolean): Promise<{ cpuUs: number; wakes: number }> {
  return new Promise((done) => {
    let wakes = 0;
    let position = 0;
    const started = Date.now();
    const cpu = process.cpuUsage();
    const tick = () => {
      wakes += 1;
      if (write) {
        writeSync(fd, frame, 0, frame.length, position);
        position = (position + frame.length) % (1 << 20);
      }
      if (Date.now() - started < SECONDS * 1000) setTimeout(tick, everyMs);
      else {
        const used = process.cpuUsage(cpu);
        done({ cpuUs: used.user + used.system, wakes });
      }
    };
    setTimeout(tick, everyMs);
  });
}

for (const write of [false, true]) {
  const fast = await loop(1, write);
  const slow = await loop(50, write);
  // cpu = background × seconds + wake × wakes, for both loops.
  const wake = (fast.cpuUs - slow.cpuUs) / (fast.wakes - slow.wakes);
  const background = (slow.cpuUs - wake * slow.wakes) / SECONDS;
  console.log(
    `${write ? 'a wake-up with a 2 kB pwrite' : 'a bare timer wake-up'}: ${wake.toFixed(1)} µs of CPU (background ${(background / 1000).toFixed(1)} ms a second)`,
  );
}
closeSync(fd);
rmSync(file);
