/**
 * Run as its own process by process-signals.test.ts: handles SIGINT/SIGTERM the way every Attest
 * program does, with a shutdown that finishes only when a line arrives on stdin, so the test decides
 * which signals arrive while it runs. Prints "ready" once the handlers are in place.
 */
import { handleProcessSignals } from '../../src/lifecycle';
import { createLogger } from '../../src/logger';

const logger = createLogger('signals-child', 'info');
handleProcessSignals(
  logger,
  () =>
    new Promise<void>((resolve) => {
      logger.info('draining');
      process.stdin.once('data', () => resolve());
    }),
);
// keeps the process alive as a server would
setInterval(() => undefined, 1000);
process.stdout.write('ready\n');
