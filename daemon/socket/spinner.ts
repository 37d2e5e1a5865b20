const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Shows, on stderr only (never in a hook's output), that a phone is being asked: the request's
 * short id and the time left. On a terminal it animates; elsewhere it writes one line.
 */
export function startSpinner(
  requestId: string,
  exp: number,
  stream: NodeJS.WriteStream = process.stderr,
): () => void {
  const shortId = requestId.slice(0, 6);
  const line = () => {
    const left = Math.max(0, Math.ceil((exp - Date.now()) / 1000));
    return `waiting for your phone — request ${shortId} — ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')} left`;
  };
  if (!stream.isTTY) {
    stream.write(`latch: ${line()}\n`);
    return () => {};
  }
  let frame = 0;
  const timer = setInterval(() => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${line()}\x1b[K`), 100);
  return () => {
    clearInterval(timer);
    stream.write('\r\x1b[K');
  };
}
