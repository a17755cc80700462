import winston from 'winston';

export type Logger = winston.Logger;

const SECRET_KEY = /pass(word)?|secret|token|authorization|api_?key|cookie|code_verifier/i;

/** Replaces values of secret-looking keys so a careless log call cannot leak them. */
const redact = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEY.test(key) && key !== 'request_id') info[key] = '[redacted]';
  }
  return info;
});

export function createLogger(service: string, level: string): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    defaultMeta: { service },
    format: winston.format.combine(redact(), winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}
