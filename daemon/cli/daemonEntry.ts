// `latch daemon`, which runs for months: the daemon alone, as one CommonJS file (daemon/bin/latch.cjs
// picks it when the command has nothing after it), without the command-line parser and the ES
// module loader, which would stay resident for the daemon's whole life.
import { run } from './commands/daemon.ts';

void run();
