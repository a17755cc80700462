/**
 * The payload version, the first field of every payload. It changes only when a field changes meaning
 * or goes away; new fields come without a new version (receivers must ignore fields they do not know).
 */
export const WEBHOOK_PAYLOAD_VERSION = '2026-11-27';

/** A payload: version, type, timestamp, then the type's own fields (`data`, and `test` on a test event). */
export function eventBody(type: string, at: Date, data: Record<string, unknown>, extra: { test?: true } = {}): string {
  return JSON.stringify({ version: WEBHOOK_PAYLOAD_VERSION, type, timestamp: at.toISOString(), ...extra, data });
}
