// The operator's lines to stderr (a pipe or a file under a supervisor): each write is a system call,
// and under load many calls end in one turn of the event loop. Lines written in one turn go out in
// one write at the end of that turn, in order; nothing waits longer, and the process's exit writes
// what is left.

/** A line writer that hands `write` the lines of each event-loop turn at once. */
export function batchedLines(write: (text: string) => void): (line: string) => void {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    try {
      write(text);
    } catch {
      // A closed stderr must not take the process down; the lines are lost, as a direct write's are.
    }
  };
  process.once('exit', flush);
  return (line) => {
    pending += `${line}\n`;
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
}
