import { readFileSync } from 'node:fs';
import { CliError, queryString } from './admin-client';
import { pageOptions, path, str, type Command } from './command';

export const apiKeyCommands: Record<string, Command> = {
  'api-key create': {
    summary: "create an API key for an app's backend (printed once)",
    options: {
      'app-id': { type: 'string', value: 'APP_ID', description: 'the app' },
      name: { type: 'string', value: 'NAME', description: 'a label' },
    },
    required: ['app-id'],
    run: (client, values) =>
      client.call('transactions', 'POST', `/apps/${path(str(values, 'app-id')!)}/api-keys`, {
        name: str(values, 'name'),
      }),
  },
  'api-key list': {
    summary: "list an app's API keys (never the keys themselves)",
    options: { 'app-id': { type: 'string', value: 'APP_ID', description: 'the app' } },
    required: ['app-id'],
    run: (client, values) => client.call('transactions', 'GET', `/apps/${path(str(values, 'app-id')!)}/api-keys`),
  },
  'api-key revoke': {
    summary: 'revoke an API key; it stops working at once',
    options: {},
    positionals: ['KEY_ID'],
    run: (client, _v, [keyId]) => client.call('transactions', 'POST', `/api-keys/${path(keyId)}/revoke`, {}),
  },
};

const TRANSACTION_FIELDS = [
  'app-id',
  'type',
  'reference',
  'from',
  'to',
  'chain',
  'token',
  'token-amount',
  'transaction-hash',
  'status',
] as const;
const TRANSACTION_HELP: Record<(typeof TRANSACTION_FIELDS)[number], [string, string]> = {
  'app-id': ['ID', 'the app it belongs to'],
  type: ['pay|sendTransaction', 'a payment or another transaction'],
  reference: ['R', "the app's own reference (unique per app)"],
  from: ['ADDR', 'sender address'],
  to: ['ADDR', 'recipient address'],
  chain: ['NAME', 'network name, e.g. worldchain'],
  token: ['CODE', 'token code, e.g. USDCE'],
  'token-amount': ['INTEGER', 'the amount times 10^6'],
  'transaction-hash': ['0x…', 'the on-chain hash, when known'],
  status: ['pending|mined|failed', 'default pending'],
};

export const transactionCommands: Record<string, Command> = {
  'app payment-policy': {
    summary:
      "show or set an app's payment policy for payment requests: underpayment tolerance, whether overpayments are flagged (paid_over), default expiry",
    options: {
      'app-id': { type: 'string', value: 'APP_ID', description: 'the app' },
      'underpayment-tolerance': {
        type: 'string',
        value: 'PERCENT',
        description: 'an underpayment within this percent still makes a request paid (0-50, default 0)',
      },
      'flag-overpayment': {
        type: 'string',
        value: 'true|false',
        description:
          'true (default): an overpaid request is paid_over; false: paid (overpayments are accepted either way)',
      },
      'default-expires-in': {
        type: 'string',
        value: 'SECONDS',
        description: 'the expiry of a request created without expires_in (60-86400, default 900)',
      },
    },
    required: ['app-id'],
    run: (client, values) => {
      const route = `/apps/${path(str(values, 'app-id')!)}/payment-policy`;
      const tolerance = str(values, 'underpayment-tolerance');
      const flag = str(values, 'flag-overpayment');
      const expiry = str(values, 'default-expires-in');
      if (tolerance === undefined && flag === undefined && expiry === undefined)
        return client.call('transactions', 'GET', route);
      if (expiry !== undefined && !/^\d{2,5}$/.test(expiry))
        throw new CliError('--default-expires-in must be a whole number of seconds from 60 to 86400');
      if (flag !== undefined && flag !== 'true' && flag !== 'false')
        throw new CliError('--flag-overpayment must be true or false');
      if (tolerance !== undefined && !/^\d{1,2}(\.\d{1,2})?$/.test(tolerance))
        throw new CliError('--underpayment-tolerance must be a percent from 0 to 50, e.g. 2.5');
      return client.call('transactions', 'PUT', route, {
        ...(tolerance !== undefined ? { underpayment_tolerance_percent: Number(tolerance) } : {}),
        ...(flag !== undefined ? { flag_overpayment: flag === 'true' } : {}),
        ...(expiry !== undefined ? { default_expires_in: Number(expiry) } : {}),
      });
    },
  },
  'transaction record': {
    summary: 'record a transaction',
    options: Object.fromEntries(
      TRANSACTION_FIELDS.map((k) => [
        k,
        { type: 'string' as const, value: TRANSACTION_HELP[k][0], description: TRANSACTION_HELP[k][1] },
      ]),
    ),
    required: ['app-id', 'type', 'reference', 'from', 'to', 'chain', 'token', 'token-amount'],
    run: (client, values) =>
      client.call(
        'transactions',
        'POST',
        '/transactions',
        Object.fromEntries(TRANSACTION_FIELDS.map((k) => [k.replace(/-/g, '_'), str(values, k)])),
      ),
  },
  'transaction set-status': {
    summary: 'move a pending transaction to mined or failed',
    options: {},
    positionals: ['TRANSACTION_ID', 'STATUS'],
    run: (client, _v, [id, status]) =>
      client.call('transactions', 'POST', `/transactions/${path(id)}/status`, { status }),
  },
  'transaction list': {
    summary: "list an app's transactions, newest first, a page at a time",
    options: {
      'app-id': { type: 'string', value: 'APP_ID', description: 'the app' },
      status: { type: 'string', value: 'pending|mined|failed', description: 'only transactions in this status' },
      ...pageOptions,
    },
    required: ['app-id'],
    run: (client, values) =>
      client.call(
        'transactions',
        'GET',
        `/transactions${queryString({ app_id: str(values, 'app-id'), status: str(values, 'status'), limit: str(values, 'limit'), cursor: str(values, 'cursor') })}`,
      ),
  },
  'transaction show': {
    summary: 'show a transaction and its status history',
    options: {},
    positionals: ['TRANSACTION_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'GET', `/transactions/${path(id)}`),
  },
};

export const priceCommands: Record<string, Command> = {
  'price set': {
    summary: 'set a price by hand (served at once)',
    options: {
      token: { type: 'string', value: 'CODE', description: 'token code, e.g. WLD' },
      fiat: { type: 'string', value: 'CODE', description: 'currency code, e.g. USD' },
      amount: { type: 'string', value: 'DECIMAL', description: 'the price, e.g. 1.510763' },
    },
    required: ['token', 'fiat', 'amount'],
    run: (client, values) =>
      client.call('prices', 'POST', '/prices', {
        token: str(values, 'token'),
        fiat: str(values, 'fiat'),
        amount: str(values, 'amount'),
      }),
  },
  'price feeds': {
    summary: 'list the price feeds, their last run, and how fresh the values they set are',
    options: {},
    run: (client) => client.call('prices', 'GET', '/feeds'),
  },
};

/** x402 (transactions service). */
export const x402Commands: Record<string, Command> = {
  'x402 seal-relayer-key': {
    summary: 'seal the x402 relayer key with the service’s KEY_ENCRYPTION_KEY; prints X402_RELAYER_KEY’s value',
    options: {
      'key-file': {
        type: 'string',
        value: 'FILE',
        description: 'a file holding the private key (0x and 64 hex digits); - reads standard input',
      },
    },
    required: ['key-file'],
    run: (client, values) => {
      const file = str(values, 'key-file')!;
      // the key is read from a file (never a flag: command lines are visible to every user of the machine)
      const key = readFileSync(file === '-' ? 0 : file, 'utf8').trim();
      return client.call('transactions', 'POST', '/x402/relayer-key', { private_key: key });
    },
  },
};
