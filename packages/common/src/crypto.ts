import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time equality of two strings of any length (both are hashed first, so lengths do not leak). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}
