/**
 * A service's logger as a service makes it (service.ts: LOG_FORMAT resolved against this process's
 * standard output), writing one event with a secret-looking field and one request line.
 */
import { commonEnv, createLogger, loadEnv, resolveLogFormat, type CommonConfig } from '../../src';
import { requestLineWriter } from '../../src/http/request-line';

const config = loadEnv<CommonConfig>(commonEnv, process.env);
const logger = createLogger('identity', 'info', resolveLogFormat(config.LOG_FORMAT ?? 'json', process.stdout.isTTY));
logger.warn('portal action refused', { app_id: 'app_1', client_secret: 'sk_live_123', role: 'viewer' });
requestLineWriter(logger)({ request_id: 'r-1', method: 'GET', path: '/portal', status: 404, duration_ms: 1.5 });
